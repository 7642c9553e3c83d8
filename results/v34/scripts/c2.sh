#!/usr/bin/env bash
# v34 call 2: the keys-as-rows kernel's GPU tests through the dealt tiles (build/v34/ukr_dealt.py, make_variants.py),
# then a same-profile A/B against the library (dealt_ab.py); needs build/v34 carried
. scripts/call-prologue.sh v34 c2
step tests 90 python3 -m pytest -q -n 8 -p no:cacheprovider -p dealt_patch tests/test_unified_keys_rows.py > $o/tests.log 2>&1
step ab 200 python3 results/v34/scripts/dealt_ab.py $o/ab.jsonl > $o/ab.log 2>&1
cat $o/times.txt; tail -3 $o/tests.log; cut -c1-700 $o/ab.log | tail -8
