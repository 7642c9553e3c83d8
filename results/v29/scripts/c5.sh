#!/usr/bin/env bash
# v29 call 5: which bench cases hold the H200 at its power cap (library dispatch, table profiles), each replayed ~2 s
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c5; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader -lms 100 > $o/clocks.csv 2>&1 &
date -u +%FT%T.%N >> $o/times.txt; python3 -c "import time; print(time.time())" >> $o/times.txt
timeout 300 python3 results/v29/scripts/power_cases.py $o/power.jsonl > $o/power.log 2>&1
echo "power rc $? $(el) s" >> $o/times.txt
kill %1
cat $o/times.txt; cut -c1-700 $o/power.log | tail -20
