#!/usr/bin/env bash
# v51 call(s) from branch wip/packed-q-terms, with build/v51 carried (make_variants.py): on any sm90 GPU the A/B of q's
# two e4m3 terms in one Q.K^T product (packed_ab.py), then on an H200 the unified re-tune on the changed kernel, the
# bench of MTP verify and the long requests, the GPU tests of the keys-as-rows kernel, the API, the profile layer and
# test_gpu, and compute-sanitizer memcheck over its bad-page tests, the last two in what is left of LIMIT seconds
# (default 540); on another GPU (an H100) the GPU tests of the keys-as-rows kernel and the API instead. Bring back
# NVIDIA_H200.json (to pagedattn/profiles/tables) and retune.tgz (its profiles-*.md reports to docs/profiles-h200.md).
. scripts/call-prologue.sh v51 c1
left() { local s=$(( ${LIMIT:-540} - ($(date +%s) - t0) - ${1:-0} )); echo $(( s > 1 ? s : 1 )); }
step ab 150 python3 results/v51/scripts/packed_ab.py $o/ab.jsonl > $o/ab.log 2>&1
grep -i "fail\|error\|Traceback" -A5 $o/ab.log | head -20; python3 results/v38/scripts/summary.py $o/ab.jsonl ukr_base
if ! grep -q H200 $o/times.txt; then
  step tests $(left) python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified_keys_rows.py tests/test_api.py \
    > $o/tests.log 2>&1
  cat $o/times.txt; tail -n 2 $o/tests.log; exit 0
fi
export KERNELS=unified
step retune 300 scripts/gpu-session.sh retune /tmp/retune > $o/retune.log 2>&1
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
tar czf $o/retune.tgz -C /tmp retune
step bench 90 python3 -m pagedattn.cli bench --workload mtp-verify long-request \
  --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
step tests $(left 30) python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified_keys_rows.py \
  tests/test_api.py tests/test_profiles.py tests/test_gpu.py > $o/tests.log 2>&1
step memcheck $(left) compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider \
  tests/test_unified_keys_rows.py -k "invalid or pages_past or nan_bytes" > $o/memcheck.log 2>&1
cat $o/times.txt; tail -n 2 $o/tests.log; grep -E "ERROR SUMMARY|passed|failed" $o/memcheck.log | tail -2
grep -A1 "^Ceilings" $o/bench-unified-h200.log | head -2
grep -E "^(mtp|long)" $o/bench-unified-h200.log | cut -c1-150
