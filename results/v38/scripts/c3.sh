#!/usr/bin/env bash
# v38 call 3, on call 2's table: the GPU tests of the unified kernels' other files (Triton kernel, tuner, bench,
# merge), compute-sanitizer memcheck over the unified bad-page tests of all three unified kernels, and the bench of
# the unified workloads call 2 did not run, with MTP verify again (its BF16 rows move 2-3 % between runs)
. scripts/call-prologue.sh v38 c3
step tests 200 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified.py tests/test_tune.py \
  tests/test_bench.py tests/test_merge.py > $o/tests.log 2>&1
step memcheck 150 compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider \
  tests/test_unified.py tests/test_unified_keys_rows.py tests/test_verify_wgmma.py -k "invalid or every_page" \
  > $o/memcheck.log 2>&1
step bench $(( 560 - ($(date +%s) - t0) )) python3 -m pagedattn.cli bench --workload mtp-verify gqa-decode gqa-verify \
  mixed-batch dense-prefill --providers pagedattn pagedattn-default --json $o/bench-rest-h200.json \
  > $o/bench-rest-h200.log 2>&1
cat $o/times.txt; tail -n 2 $o/tests.log; grep -E "ERROR SUMMARY|passed|failed" $o/memcheck.log | tail -2
grep -A3 "^Ceilings" $o/bench-rest-h200.log | head -4
grep -E "^(mtp|gqa|mixed|dense)" $o/bench-rest-h200.log | grep -v "8192 " | cut -c1-150
