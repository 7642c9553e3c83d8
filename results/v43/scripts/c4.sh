#!/usr/bin/env bash
# v43 call 4 (any sm90 GPU): where the ws kernel's warps wait: ncu's per-SASS-line stall samples (SourceCounters) and the
# warp-state breakdown for the q=4 long request's ws kernel (s4v2), third launch
. scripts/call-prologue.sh v43 c4
step ncu 150 ncu --kernel-name regex:ws_fp8 --launch-skip 2 --launch-count 1 --clock-control none \
  --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
  python3 results/v43/scripts/ws_ab.py --one s4v2 > $o/source.csv 2> $o/source.err
step raw 90 ncu --kernel-name regex:ws_fp8 --launch-skip 2 --launch-count 1 --clock-control none \
  --section WarpStateStats --page raw --csv python3 results/v43/scripts/ws_ab.py --one s4v2 > $o/raw.csv 2> $o/raw.err
cat $o/times.txt; wc -l $o/source.csv; tail -3 $o/source.err
