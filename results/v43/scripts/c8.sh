#!/usr/bin/env bash
# v43 call 8 (any sm90 GPU): ncu's per-SASS-line stall samples of the ws kernel (ccahqc) with K/V held in L2
# (l2_ab.py --one, third launch), and the same for the library's kernel on that call is not taken (its profile is
# perf-notes v42 item 3's)
. scripts/call-prologue.sh v43 c8
step ncu 60 ncu --kernel-name regex:ws_fp8 --launch-skip 2 --launch-count 1 --clock-control none \
  --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
  python3 results/v43/scripts/l2_ab.py --one ccahqc > $o/source.csv 2> $o/source.err
cat $o/times.txt; tail -2 $o/source.err
python3 results/v43/scripts/stalls.py $o/source.csv 24
