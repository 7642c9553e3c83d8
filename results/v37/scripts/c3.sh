#!/usr/bin/env bash
# v37 call 3: item 1 moved the unified kernels' hash: the unified H200 table re-tuned (scripts/gpu-session.sh
# retune), then on it the GPU tests of the profile layer and the shipped table, and the bench of the workloads that
# run the two changed kernels (MTP verify, long request; both columns)
. scripts/call-prologue.sh v37 c3
export KERNELS=unified
step retune 400 scripts/gpu-session.sh retune /tmp/retune > $o/retune.log 2>&1
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
tar czf $o/retune.tgz -C /tmp retune
step tests 80 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_profiles.py tests/test_gpu.py > $o/tests.log 2>&1
step bench $(( 585 - ($(date +%s) - t0) )) python3 -m pagedattn.cli bench --workload mtp-verify long-request \
  --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
mkdir -p /tmp/r && tar xzf /tmp/retune/session.tgz -C /tmp/r
cat $o/times.txt; for f in /tmp/r/tune-*.log; do echo "== $f"; tail -2 "$f"; done; tail -n 2 $o/tests.log
grep -A3 "^Ceilings" $o/bench-unified-h200.log | head -4
grep -E "^(mtp|long)" $o/bench-unified-h200.log | cut -c1-150
