#!/usr/bin/env bash
# v29 call 3: the K-ahead probe (build/v29/ukr16_k_ahead.py, from results/v29/scripts/make_variants.py; the call ran a tracked copy) at K rings of 3 and 2, checked, and timed against call 2's st2 form and the wgmma kernel
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c3; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 200 > $o/clocks.csv 2>&1 &
timeout 540 python3 results/v29/scripts/bf16_rows_ab.py $o/ab.jsonl --checks-only-for kahead3,kahead2 st2 kahead3 kahead2 > $o/ab.log 2>&1
echo "ab rc $? $(el) s" >> $o/times.txt
kill %1
cat $o/times.txt; grep -v '^{"check' $o/ab.log | cut -c1-900 | tail -30
