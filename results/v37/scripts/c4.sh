#!/usr/bin/env bash
# v37 call 4: the final tree (call 3's re-tuned unified table): the GPU tests of the profile layer, the unified
# kernels, the tuner, the bench and the merge, then the bench of the unified workloads call 3 did not run (their
# kernels are unchanged; the mixed batch's short bucket took another profile in the re-tune)
. scripts/call-prologue.sh v37 c4
step tests 240 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_profiles.py tests/test_unified.py \
  tests/test_tune.py tests/test_bench.py tests/test_merge.py > $o/tests.log 2>&1
step bench $(( 585 - ($(date +%s) - t0) )) python3 -m pagedattn.cli bench --workload gqa-decode gqa-verify \
  mixed-batch dense-prefill --providers pagedattn pagedattn-default --json $o/bench-unified-rest-h200.json \
  > $o/bench-unified-rest-h200.log 2>&1
cat $o/times.txt; tail -n 2 $o/tests.log; grep -A3 "^Ceilings" $o/bench-unified-rest-h200.log | head -4
grep -E "^(gqa|mixed|dense)" $o/bench-unified-rest-h200.log | cut -c1-150
