#!/usr/bin/env bash
# v28 call 2: is Q.K^T's chain of 16 dependent FP8 wgmma steps what the q=1 loop's scores step waits on
# (call 1's copy warp took every copy off the softmax's warps and gained 1.4 %)? main's kernel against
# two accumulators for q's two e4m3 terms and against q's high term alone (results/v28/scripts/variant_ab.py)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c2; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 300 python3 results/v28/scripts/variant_ab.py $o/chains_ab.jsonl ukr_main ukr_two_chains ukr_hi_only > $o/probe.log 2>&1
echo "ab rc $? $(el) s" >> $o/times.txt
cat $o/times.txt; cut -c1-900 $o/probe.log
