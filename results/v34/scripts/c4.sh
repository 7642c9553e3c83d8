#!/usr/bin/env bash
# v34 call 4: on call 1's re-tuned mixed-batch table and item 4's partition rule, the GPU tests of the profile layer,
# the shipped table, the bench and the GPU suite, then the unified bench (both columns)
. scripts/call-prologue.sh v34 c4
step tests 170 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_profiles.py tests/test_gpu.py \
  tests/test_bench.py tests/test_unified.py > $o/tests.log 2>&1
step bench-unified 150 python3 -m pagedattn.cli bench --workload mtp-verify long-request gqa-decode gqa-verify \
  mixed-batch dense-prefill --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json \
  > $o/bench-unified-h200.log 2>&1
cat $o/times.txt; tail -3 $o/tests.log; grep -A3 "^Ceilings" $o/bench-unified-h200.log | head -4
grep -E "^(mtp|long|gqa|mixed|dense)" $o/bench-unified-h200.log | cut -c1-150
