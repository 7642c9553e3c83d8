#!/usr/bin/env bash
# v28 call 7: both H200 tables re-tuned after the review's refactor of the Gluon kernels (branch
# wip/vote-read-helper: `gluon_common.any_warp_voted` and `scaled_halves`, the `id` rename; 18 of 20
# offline sm90 builds byte-identical to main's, the other two the same instructions reordered).
# The tuner checks every candidate against the float64 reference on the bench's shapes.
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c7; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
KERNELS="sparse unified" scripts/gpu-session.sh retune /tmp/retune > $o/retune.log 2>&1
echo "retune rc $? $(el) s" >> $o/times.txt
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
tar czf $o/retune.tgz -C /tmp retune
grep -h "tuned .* buckets\|kept\|moved" /tmp/retune/tune-*.log | tail -20; cat $o/times.txt
