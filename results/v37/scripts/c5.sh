#!/usr/bin/env bash
# v37 call 5: the GPU tests of both Gluon unified kernels through the bounds probes (build/v37 ukr_bounds.py,
# vw_bounds.py; bounds_patch.py), then their same-profile A/B against commit 17a3894's kernels (library_ab.py
# --bounds); needs build/v37 carried (make_variants.py)
. scripts/call-prologue.sh v37 c5
step tests 120 python3 -m pytest -q -n 8 -p no:cacheprovider -p bounds_patch tests/test_unified_keys_rows.py \
  tests/test_verify_wgmma.py > $o/tests.log 2>&1
step ab 200 python3 results/v37/scripts/library_ab.py $o/ab.jsonl --bounds > $o/ab.log 2>&1
cat $o/times.txt; tail -n 2 $o/tests.log; grep -i "fail\|error" $o/ab.log | head -5
python3 -c "
import json
for l in open('$o/ab.jsonl'):
    r = json.loads(l); b = r['ms']['library']
    print(r['case'][:44], {k: round(v * 1e3, 2) for k, v in r['ms'].items()}, {k: round(v / b, 3) for k, v in r['ms'].items()},
      'max rel-L2 %.1e' % max(e for e, _ in r['rel_l2_nan'].values()), 'nan' if any(n for _, n in r['rel_l2_nan'].values()) else '')"
