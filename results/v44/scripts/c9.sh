#!/usr/bin/env bash
# v44 call 9, only on an H200 (on any other GPU it stops after writing the GPU's name): item 6 (the keys-as-rows
# kernel's q and first page-table loads before its first copy) moved the unified kernels' hash: the unified H200
# table re-tuned (scripts/gpu-session.sh retune), then on it the GPU tests of the keys-as-rows kernel and the profile
# layer, and the bench of MTP verify and the long requests (the session had ~460 s of device time left)
. scripts/call-prologue.sh v44 c9
if ! grep -q H200 $o/times.txt; then cat $o/times.txt; exit 0; fi
export KERNELS=unified
step retune 265 scripts/gpu-session.sh retune /tmp/retune > $o/retune.log 2>&1
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
tar czf $o/retune.tgz -C /tmp retune
step tests 60 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified_keys_rows.py tests/test_profiles.py \
  > $o/tests.log 2>&1
step bench 70 python3 -m pagedattn.cli bench --workload mtp-verify long-request \
  --providers pagedattn --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
cat $o/times.txt; tail -n 2 $o/tests.log
grep -A1 "^Ceilings" $o/bench-unified-h200.log | head -2
grep -E "^(mtp|long)" $o/bench-unified-h200.log | cut -c1-150
