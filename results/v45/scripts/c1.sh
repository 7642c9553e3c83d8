#!/usr/bin/env bash
# v45's landing call for v44 item 6 (v44's c9.sh reordered for a short device budget), to run from branch
# wip/early-prologue-loads, only on an H200 (on any other GPU it stops after writing the GPU's name): the unified
# re-tune (v38 call 2's took 233 s), then the bench of MTP verify and the long requests that decides the merge
# (v38: 48 s), then the GPU tests of both Gluon unified kernels, the API, the profile layer and test_gpu (v38: 75 s),
# then compute-sanitizer memcheck over the changed kernel's bad-page tests (v38 call 4: 12 s), the last two in what is
# left of LIMIT seconds (default 540). Bring back NVIDIA_H200.json (to pagedattn/profiles/tables) and retune.tgz (its
# profiles-*.md reports to docs/profiles-h200.md).
. scripts/call-prologue.sh v45 c1
if ! grep -q H200 $o/times.txt; then cat $o/times.txt; exit 0; fi
# seconds left of LIMIT less $1, at least 1 (`timeout 0` would wait forever, a negative one fails)
left() { local s=$(( ${LIMIT:-540} - ($(date +%s) - t0) - ${1:-0} )); echo $(( s > 1 ? s : 1 )); }
export KERNELS=unified
step retune 300 scripts/gpu-session.sh retune /tmp/retune > $o/retune.log 2>&1
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
tar czf $o/retune.tgz -C /tmp retune
step bench 90 python3 -m pagedattn.cli bench --workload mtp-verify long-request \
  --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
step tests $(left 30) python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified_keys_rows.py \
  tests/test_verify_wgmma.py tests/test_api.py tests/test_profiles.py tests/test_gpu.py > $o/tests.log 2>&1
step memcheck $(left) compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider \
  tests/test_unified_keys_rows.py -k "invalid or pages_past or nan_bytes" > $o/memcheck.log 2>&1
cat $o/times.txt; tail -n 2 $o/tests.log; grep -E "ERROR SUMMARY|passed|failed" $o/memcheck.log | tail -2
grep -A1 "^Ceilings" $o/bench-unified-h200.log | head -2
grep -E "^(mtp|long)" $o/bench-unified-h200.log | cut -c1-150
