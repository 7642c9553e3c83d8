#!/usr/bin/env bash
# v23 call 7: keys-as-rows split counts at one tile per split against four (rules' FP8 decode at head size 256);
# the two Gluon unified kernels' GPU tests on the final tree
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c7; mkdir -p $o
timeout 150 python3 build/v23/split_ab.py $o/split_ab.jsonl > $o/split_ab.log 2>&1
echo "rc $?" >> $o/split_ab.log
python3 - $o/split_ab.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(f"{r['case']:34s} {r['profiles']['old']:36s} {r['ms']['old']*1e3:6.1f} -> {r['profiles']['new']:36s} {r['ms']['new']*1e3:6.1f} us {r['new_over_old']:.3f} rel {max(r['rel_l2'].values()):.1e} nan {r['nan']}")
PY
tail -1 $o/split_ab.log
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_unified_keys_rows.py tests/test_verify_wgmma.py tests/test_profiles.py tests/test_unified.py > $o/tests.log 2>&1
echo "rc $?" >> $o/tests.log
tail -2 $o/tests.log
