#!/usr/bin/env bash
# v38 call 2: item 1 (one bound per key row in both Gluon unified kernels, the keys-as-rows loop's early page-table
# read) moved the unified kernels' hash: the unified H200 table re-tuned (scripts/gpu-session.sh retune), then on it
# the GPU tests of both Gluon unified kernels, the API, the profile layer and the shipped table, and the bench of
# the workloads that run the two changed kernels (MTP verify, long request; both columns)
. scripts/call-prologue.sh v38 c2
export KERNELS=unified
step retune 330 scripts/gpu-session.sh retune /tmp/retune > $o/retune.log 2>&1
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
tar czf $o/retune.tgz -C /tmp retune
step tests 160 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified_keys_rows.py tests/test_verify_wgmma.py \
  tests/test_api.py tests/test_profiles.py tests/test_gpu.py > $o/tests.log 2>&1
step bench $(( 575 - ($(date +%s) - t0) )) python3 -m pagedattn.cli bench --workload mtp-verify long-request \
  --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
mkdir -p /tmp/r && tar xzf /tmp/retune/session.tgz -C /tmp/r
cat $o/times.txt; for f in /tmp/r/tune-*.log; do echo "== $f"; tail -2 "$f"; done; tail -n 2 $o/tests.log
grep -A3 "^Ceilings" $o/bench-unified-h200.log | head -4
grep -E "^(mtp|long)" $o/bench-unified-h200.log | cut -c1-150
