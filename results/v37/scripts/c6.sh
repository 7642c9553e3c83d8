#!/usr/bin/env bash
# v37 call 6: call 5's bounds probe against 17a3894's kernels once more on the FP8 long request at q=1, the case it
# lost (1.051x), to tell a repeatable loss from a machine's noise (library_ab.py --bounds --only); needs build/v37
. scripts/call-prologue.sh v37 c6
step ab 120 python3 results/v37/scripts/library_ab.py $o/ab.jsonl --bounds --only "kv=131072 16q/1kv" > $o/ab.log 2>&1
cat $o/times.txt; grep -i "fail\|error" $o/ab.log | head -5
python3 -c "
import json
for l in open('$o/ab.jsonl'):
    r = json.loads(l); b = r['ms']['library']
    print(r['case'][:44], {k: round(v * 1e3, 2) for k, v in r['ms'].items()}, {k: round(v / b, 3) for k, v in r['ms'].items()},
      [[round(x * 1e3, 2) for x in v] for v in r['ms_all'].values()], 'max rel-L2 %.1e' % max(e for e, _ in r['rel_l2_nan'].values()))"
