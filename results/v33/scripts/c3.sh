#!/usr/bin/env bash
# v33 call 3: on call 2's re-tuned tables, the GPU tests of the changed code (unified kernel, merge, profile layer and
# the shipped table's hashes, tuner's mixed-batch cases, API, bench, sparse kernels: their merge changed too), then
# the unified and sparse benches
. scripts/call-prologue.sh v33 c3
step tests 170 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified.py tests/test_merge.py \
  tests/test_profiles.py tests/test_api.py tests/test_gpu.py tests/test_bench.py tests/test_sparse.py \
  tests/test_tune.py -k "not test_tune.py or mixed" > $o/tests.log 2>&1
step bench-unified 150 python3 -m pagedattn.cli bench --workload mtp-verify long-request gqa-decode gqa-verify \
  mixed-batch dense-prefill --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json \
  > $o/bench-unified-h200.log 2>&1
step bench-sparse $(( 560 - ($(date +%s) - t0) )) python3 -m pagedattn.cli bench --workload sparse-prefill \
  sparse-decode --providers pagedattn pagedattn-default --json $o/bench-sparse-h200.json > $o/bench-sparse-h200.log 2>&1
cat $o/times.txt; tail -3 $o/tests.log; grep -A3 "^Ceilings" $o/bench-unified-h200.log | head -4
grep -E "^(mtp|long|gqa|mixed|dense)" $o/bench-unified-h200.log | grep "pagedattn  " | cut -c1-120
grep -E "^sparse" $o/bench-sparse-h200.log | grep "pagedattn  " | cut -c1-120 | head -30
