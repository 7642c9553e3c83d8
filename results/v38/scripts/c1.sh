#!/usr/bin/env bash
# v38 call 1: the bounds probes' same-profile A/B against commit 97f0dc6's kernels (bounds_ab.py), then the GPU tests of
# both Gluon unified kernels through the probe that call 1's offline build favours for each (bounds_patch.py);
# needs build/v38 carried (make_variants.py)
. scripts/call-prologue.sh v38 c1
step ab 330 python3 results/v38/scripts/bounds_ab.py $o/ab.jsonl > $o/ab.log 2>&1
step tests 150 python3 -m pytest -q -n 8 -p no:cacheprovider -p bounds_patch tests/test_unified_keys_rows.py \
  tests/test_verify_wgmma.py > $o/tests.log 2>&1
cat $o/times.txt; tail -n 2 $o/tests.log; grep -i "fail\|error" $o/ab.log | head -5
python3 results/v38/scripts/summary.py $o/ab.jsonl base
