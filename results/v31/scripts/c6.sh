#!/usr/bin/env bash
# v31 call 6: where the in-kernel merge's (v2) time goes, stamped, against the library's kernel + merge kernel;
# needs build/v31 carried (make_variants.py)
set -u
export PYTHONPATH=$PWD:$PWD/build/v31 PYTHONUNBUFFERED=1
o=$OUT/c6; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 240 python3 results/v31/scripts/fused_stamps.py $o/stamps.json > $o/stamps.log 2>&1
echo "stamps rc $? $(el) s" >> $o/times.txt
cat $o/times.txt; cut -c1-1500 $o/stamps.log | tail -4
