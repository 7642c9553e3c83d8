#!/usr/bin/env bash
# v22 call 5: the GPU suite on the final tree, then near-bucket dispatch against the rules
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c5; mkdir -p $o
timeout 330 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/tests.log 2>&1
echo "rc $?" >> $o/tests.log
tail -4 $o/tests.log
timeout 230 python3 build/v22/near_dispatch_check.py $o/near.jsonl > $o/near.log 2>&1
echo "rc $?" >> $o/near.log
python3 - $o/near.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(f"{r['case']:40s} {r['dispatched']:40s} {r['rules']:40s} {r['dispatched_over_rules']:.3f} {max(r['rel_l2'].values()):.2e} {r['nan']}")
PY
tail -2 $o/near.log | cut -c1-200
tar czf $OUT/c5.tgz -C $OUT c5
