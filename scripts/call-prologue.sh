# Sourced first by a device call's script (results/vNN/scripts/cN.sh): `. scripts/call-prologue.sh vNN cN`.
# Sets -u; puts the repository, build/vNN (probe kernels made offline, carried to the device) and
# results/vNN/scripts on PYTHONPATH; $o = $OUT/cN (created) with the GPU's name, clocks and power limit in
# $o/times.txt; `step NAME SECONDS CMD...` runs CMD under a timeout and appends "NAME rc RC ELAPSED s" to it;
# `left` and `land_unified` (below) serve the calls that land a kernel change.
set -u
export PYTHONPATH=$PWD:$PWD/build/$1:$PWD/results/$1/scripts PYTHONUNBUFFERED=1
o=$OUT/$2
mkdir -p "$o"
t0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > "$o/times.txt"
step() {
    local name=$1 seconds=$2
    shift 2
    timeout "$seconds" "$@"
    echo "$name rc $? $(( $(date +%s) - t0 )) s" >> "$o/times.txt"
}
# `left [S]`: the seconds left of LIMIT (default 540) from the call's start, less S, at least 1 (`timeout 0` would
# wait forever, a negative one fails).
left() { local s=$(( ${LIMIT:-540} - ($(date +%s) - t0) - ${1:-0} )); echo $(( s > 1 ? s : 1 )); }
# `land_unified`: what a unified kernel change needs on an H200 before it lands, each step in what is left of LIMIT:
# the unified re-tune (its table copied to $o, its reports in $o/retune.tgz), the bench of MTP verify and the long
# requests, the GPU tests of the keys-as-rows kernel, the API, the profile layer and test_gpu, and compute-sanitizer
# memcheck over the keys-as-rows kernel's bad-page and NaN-byte tests; then a summary of each.
land_unified() {
    KERNELS=unified step retune "$(left 10)" scripts/gpu-session.sh retune /tmp/retune > "$o/retune.log" 2>&1
    cp pagedattn/profiles/tables/NVIDIA_H200.json "$o/"
    tar czf "$o/retune.tgz" -C /tmp retune
    step bench "$(left)" python3 -m pagedattn.cli bench --workload mtp-verify long-request \
      --providers pagedattn pagedattn-default --json "$o/bench-unified-h200.json" > "$o/bench-unified-h200.log" 2>&1
    step tests "$(left)" python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified_keys_rows.py \
      tests/test_api.py tests/test_profiles.py tests/test_gpu.py > "$o/tests.log" 2>&1
    step memcheck "$(left)" compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider \
      tests/test_unified_keys_rows.py -k "invalid or pages_past or nan_bytes" > "$o/memcheck.log" 2>&1
    cat "$o/times.txt"; tail -n 2 "$o/tests.log"; grep -E "ERROR SUMMARY|passed|failed" "$o/memcheck.log" | tail -2
    grep -A1 "^Ceilings" "$o/bench-unified-h200.log" | head -2
    grep -E "^(mtp|long)" "$o/bench-unified-h200.log" | cut -c1-150
}
