#!/usr/bin/env bash
# v37 call 2: item 1 in the library (ops/verify_wgmma.py's tile addressing, the keys-as-rows register cap): the GPU
# tests of both Gluon unified kernels, the API and the compile report, then the same-profile A/B against the kernels
# before it and the scores-first probe (library_ab.py); needs build/v37 carried (make_variants.py)
. scripts/call-prologue.sh v37 c2
step tests 200 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified_keys_rows.py tests/test_verify_wgmma.py \
  tests/test_api.py tests/test_compile.py > $o/tests.log 2>&1
step ab 330 python3 results/v37/scripts/library_ab.py $o/ab.jsonl > $o/ab.log 2>&1
cat $o/times.txt; tail -n 3 $o/tests.log; grep -i "fail\|error" $o/ab.log | head -5
python3 -c "
import json
for l in open('$o/ab.jsonl'):
    r = json.loads(l); b = r['ms']['library']
    print(r['case'][:44], {k: round(v * 1e3, 2) for k, v in r['ms'].items()}, {k: round(v / b, 3) for k, v in r['ms'].items()},
      'max rel-L2 %.1e' % max(e for e, _ in r['rel_l2_nan'].values()), 'nan' if any(n for _, n in r['rel_l2_nan'].values()) else '')"
