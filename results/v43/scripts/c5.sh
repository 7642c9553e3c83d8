#!/usr/bin/env bash
# v43 call 5 (any sm90 GPU): ws_ab.py's check and A/B (3 rounds) with each consumer converting its own V ("cc"), then
# ncu's per-SASS-line stall samples of the q=4 long request's cc kernel, third launch (stalls.py reads them)
. scripts/call-prologue.sh v43 c5
step check 100 python3 results/v43/scripts/ws_ab.py --check $o/check.jsonl > $o/check.log 2>&1
step ab 200 python3 results/v43/scripts/ws_ab.py $o/ab.jsonl 3 > $o/ab.log 2>&1
step ncu 60 ncu --kernel-name regex:ws_fp8 --launch-skip 2 --launch-count 1 --clock-control none \
  --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
  python3 results/v43/scripts/ws_ab.py --one cc > $o/source.csv 2> $o/source.err
cat $o/times.txt; grep -c ok $o/check.log; grep -i "FAIL\|error\|Traceback" -A3 $o/check.log $o/ab.log | head -30
python3 results/v38/scripts/summary.py $o/ab.jsonl base
python3 results/v43/scripts/stalls.py $o/source.csv 14
