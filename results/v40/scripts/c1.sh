#!/usr/bin/env bash
# v40 call 1, on an H100 (kind nvidia-h100-x1): the first H100 table of the unified kernels, tuned from the sm90
# rules (written from the H200 table) with `scripts/gpu-session.sh retune`'s unified passes and first guesses,
# then the bench of the unified workloads with that table (pagedattn) and without it (pagedattn-default)
. scripts/call-prologue.sh v40 c1
KERNELS=unified step retune 470 bash scripts/gpu-session.sh retune $o/retune > $o/retune.log 2>&1
step bench $(( 590 - ($(date +%s) - t0) )) python3 -m pagedattn.cli bench --workload mtp-verify long-request \
  gqa-decode gqa-verify dense-prefill --providers pagedattn pagedattn-default --json $o/bench-unified.json \
  > $o/bench-unified.log 2>&1
cat $o/times.txt; grep "^== tune\|rc \|interrupted\|buckets" $o/retune.log | head -20
grep -A3 "^Ceilings" $o/bench-unified.log | head -4
grep -E "^(mtp|long|gqa|mixed|dense)" $o/bench-unified.log | cut -c1-160
