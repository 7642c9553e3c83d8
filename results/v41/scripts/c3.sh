#!/usr/bin/env bash
# v41 call 3, on an H100 (kind nvidia-h100-x1): the sparse kernels' first H100 tuning (`gpu-session.sh retune` with
# KERNELS=sparse: the sm90 rules' profiles against the tuner's candidates, as v40 call 1 did for the unified
# kernels), then the sparse workloads' bench with the table it wrote (pagedattn) and without (pagedattn-default)
. scripts/call-prologue.sh v41 c3
KERNELS=sparse step retune 260 bash scripts/gpu-session.sh retune $o/retune > $o/retune.log 2>&1
step bench $(( 550 - ($(date +%s) - t0) )) python3 -m pagedattn.cli bench --workload sparse-decode sparse-prefill \
  --providers pagedattn pagedattn-default --json $o/bench-sparse.json > $o/bench-sparse.log 2>&1
cat $o/times.txt; grep "^== tune\|rc \|interrupted\|buckets\|kept\|speedup" $o/retune/tune-sparse.log | head -20
grep -A3 "^Ceilings" $o/bench-sparse.log | head -4
grep -E "^sparse" $o/bench-sparse.log | cut -c1-170
