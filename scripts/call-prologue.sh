# Sourced first by a device call's script (results/vNN/scripts/cN.sh): `. scripts/call-prologue.sh vNN cN`.
# Sets -u; puts the repository, build/vNN (probe kernels made offline, carried to the device) and
# results/vNN/scripts on PYTHONPATH; $o = $OUT/cN (created) with the GPU's name, clocks and power limit in
# $o/times.txt; `step NAME SECONDS CMD...` runs CMD under a timeout and appends "NAME rc RC ELAPSED s" to it.
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
