#!/usr/bin/env bash
# v29 call 4: BF16 MTP's bound: the 16-bit keys-as-rows kernel whole, math only, copies only, the wgmma kernel
# and a streaming read, timed and replayed for ~2 s each under a 100 ms nvidia-smi log of SM clock and power
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c4; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader -lms 100 > $o/clocks.csv 2>&1 &
date -u +%FT%T.%N >> $o/times.txt; python3 -c "import time; print(time.time())" >> $o/times.txt
timeout 300 python3 results/v29/scripts/parts_power.py $o/parts.jsonl > $o/parts.log 2>&1
echo "parts rc $? $(el) s" >> $o/times.txt
kill %1
cat $o/times.txt; cut -c1-700 $o/parts.log | tail -20
