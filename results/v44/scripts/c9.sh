#!/usr/bin/env bash
# v44 call 9, to run from branch wip/early-prologue-loads (item 6 in the library), only on an H200 (on any other GPU it
# stops after writing the GPU's name; the session's two tries got none): item 6 moves the unified kernels' hash, so
# the unified H200 table is re-tuned (scripts/gpu-session.sh retune), then on it the GPU tests of both Gluon unified
# kernels, the API, the profile layer and the shipped table, and the bench of MTP verify and the long requests (both
# columns). Bring back NVIDIA_H200.json and retune.tgz: the table lands in pagedattn/profiles/tables, the reports
# (retune/session.tgz: profiles-*.md) in docs/profiles-h200.md.
. scripts/call-prologue.sh v44 c9
if ! grep -q H200 $o/times.txt; then cat $o/times.txt; exit 0; fi
export KERNELS=unified
step retune 330 scripts/gpu-session.sh retune /tmp/retune > $o/retune.log 2>&1
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
tar czf $o/retune.tgz -C /tmp retune
step tests 160 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified_keys_rows.py tests/test_verify_wgmma.py \
  tests/test_api.py tests/test_profiles.py tests/test_gpu.py > $o/tests.log 2>&1
step bench $(( 575 - ($(date +%s) - t0) )) python3 -m pagedattn.cli bench --workload mtp-verify long-request \
  --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
cat $o/times.txt; tail -n 2 $o/tests.log
grep -A1 "^Ceilings" $o/bench-unified-h200.log | head -2
grep -E "^(mtp|long)" $o/bench-unified-h200.log | cut -c1-150
