#!/usr/bin/env bash
# v28 call 5: the streaming read's rate by the bytes read, and the paged read of two more FP8 cases
# (results/v28/scripts/stream_sizes.py)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c5; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 300 python3 results/v28/scripts/stream_sizes.py $o/stream_sizes.json > $o/probe.log 2>&1
echo "rc $? $(el) s" >> $o/times.txt
cat $o/times.txt; tail -c 2000 $o/probe.log
