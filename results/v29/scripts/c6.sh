#!/usr/bin/env bash
# v29 call 6: the FP8 column-split keys-as-rows probe (build/v29/ukr8_columns.py, from results/v29/scripts/make_variants.py; the call ran a tracked copy): checks, then timed against the library kernel
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c6; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader -lms 100 > $o/clocks.csv 2>&1 &
date -u +%FT%T.%N >> $o/times.txt; python3 -c "import time; print(time.time())" >> $o/times.txt
timeout 520 python3 results/v29/scripts/fp8_columns_ab.py $o/ab.jsonl > $o/ab.log 2>&1
echo "ab rc $? $(el) s" >> $o/times.txt
kill %1
cat $o/times.txt; grep -v "^{.check" $o/ab.log | cut -c1-1200 | tail -20
