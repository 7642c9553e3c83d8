#!/usr/bin/env bash
# v51 call 2, from branch wip/packed-q-terms after call 1: the kernel packs q's two e4m3 terms at 16 packed rows only
# (its 16-row builds are call 1's ukr_packed and its other builds v50's, SASS for SASS, offline), so only an H200
# runs on (elsewhere it stops after writing the GPU's name): the unified re-tune on it, the bench of MTP verify and the
# long requests, the GPU tests of the keys-as-rows kernel, the API, the profile layer and test_gpu, and
# compute-sanitizer memcheck over its bad-page tests, each after the re-tune in what is left of LIMIT seconds
# (default 400; a cold re-tune took 217 s in v50 call 7).
# Bring back NVIDIA_H200.json (to pagedattn/profiles/tables) and retune.tgz (its reports to docs/profiles-h200.md).
. scripts/call-prologue.sh v51 c2
if ! grep -q H200 $o/times.txt; then cat $o/times.txt; exit 0; fi
left() { local s=$(( ${LIMIT:-400} - ($(date +%s) - t0) - ${1:-0} )); echo $(( s > 1 ? s : 1 )); }
export KERNELS=unified
step retune $(left 10) scripts/gpu-session.sh retune /tmp/retune > $o/retune.log 2>&1
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
tar czf $o/retune.tgz -C /tmp retune
step bench $(left) python3 -m pagedattn.cli bench --workload mtp-verify long-request \
  --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
step tests $(left) python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified_keys_rows.py \
  tests/test_api.py tests/test_profiles.py tests/test_gpu.py > $o/tests.log 2>&1
step memcheck $(left) compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider \
  tests/test_unified_keys_rows.py -k "invalid or pages_past or nan_bytes" > $o/memcheck.log 2>&1
cat $o/times.txt; tail -n 2 $o/tests.log; grep -E "ERROR SUMMARY|passed|failed" $o/memcheck.log | tail -2
grep -A1 "^Ceilings" $o/bench-unified-h200.log | head -2
grep -E "^(mtp|long)" $o/bench-unified-h200.log | cut -c1-150
