#!/usr/bin/env bash
# v44 call 11 (any sm90 GPU; an H100 came): the GPU tests of item 6's keys-as-rows kernel and of the API on it (the
# H100 has no unified table: its unified calls take the sm90 rules)
. scripts/call-prologue.sh v44 c11
step tests 170 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified_keys_rows.py tests/test_api.py \
  > $o/tests.log 2>&1
cat $o/times.txt; grep -E "FAILED|Error" $o/tests.log | head -20; tail -n 3 $o/tests.log
