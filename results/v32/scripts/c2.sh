#!/usr/bin/env bash
# v32 call 2: the unified kernel takes a query-length range (the partitioned mixed batch, perf-notes v32 item 3),
# which moves its hash: the H200 table's unified entries re-tuned (scripts/gpu-session.sh retune), then the GPU
# tests of the unified kernel, the profile layer (the shipped table's hash), the API and the bench
. scripts/call-prologue.sh v32 c2
export KERNELS=unified
step retune 400 scripts/gpu-session.sh retune /tmp/retune > $o/retune.log 2>&1
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
tar czf $o/retune.tgz -C /tmp retune
step tests $(( 575 - ($(date +%s) - t0) )) python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified.py \
  tests/test_profiles.py tests/test_gpu.py tests/test_api.py tests/test_bench.py > $o/tests.log 2>&1
cat $o/times.txt; grep -h "tuned .* buckets\|kept\|moved" /tmp/retune/tune-*.log | tail -20; tail -5 $o/tests.log
