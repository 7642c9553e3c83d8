#!/usr/bin/env bash
# v32 call 1: the keys-as-rows kernel's GPU tests through the claimed tiles (build/v32, make_variants.py), then a
# same-profile A/B against the library; needs build/v32 carried
. scripts/call-prologue.sh v32 c1
step tests 200 python3 -m pytest -q -x -n 8 -p claim_patch tests/test_unified_keys_rows.py > $o/tests.log 2>&1
step ab 300 python3 results/v32/scripts/claim_ab.py $o/ab.jsonl > $o/ab.log 2>&1
cat $o/times.txt; tail -3 $o/tests.log; cut -c1-700 $o/ab.log | tail -8
