#!/usr/bin/env bash
# v27 call 6: the stamp probe on the final tree with the loop steps summed as well
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c6; mkdir -p $o
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 150 python3 results/v27/scripts/stamp_probe.py $o/stamps.json direct >> $o/times.txt 2>&1
echo "stamps rc $?" >> $o/times.txt
cut -c1-1500 $o/times.txt
