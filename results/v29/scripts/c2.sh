#!/usr/bin/env bash
# v29 call 2: the 16-bit keys-as-rows kernel's checks and its A/B against the wgmma kernel on BF16 MTP
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c2; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 200 > $o/clocks.csv 2>&1 &
timeout 540 python3 results/v29/scripts/bf16_rows_ab.py $o/ab.jsonl > $o/ab.log 2>&1
echo "ab rc $? $(el) s" >> $o/times.txt
kill %1
cat $o/times.txt; grep -v '^{"check' $o/ab.log | cut -c1-900 | tail -30
