#!/usr/bin/env bash
# v38 call 4: the new tests of a block table narrower than its sequences (conftest.check_pages_past_the_table) on
# all three unified kernels, then under compute-sanitizer memcheck (a read past a table row would show there)
. scripts/call-prologue.sh v38 c4
step tests 100 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified.py tests/test_verify_wgmma.py \
  tests/test_unified_keys_rows.py -k pages_past > $o/tests.log 2>&1
step memcheck 120 compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider \
  tests/test_verify_wgmma.py tests/test_unified_keys_rows.py -k pages_past > $o/memcheck.log 2>&1
cat $o/times.txt; tail -n 2 $o/tests.log; grep -E "ERROR SUMMARY|passed|failed" $o/memcheck.log | tail -2
