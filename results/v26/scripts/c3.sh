#!/usr/bin/env bash
# v26 call 3: the whole GPU suite on the final tree and call 2's re-tuned sparse table
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c3; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/gpu.txt
timeout 330 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/gpu.txt
tail -4 $o/tests.log; cat $o/gpu.txt
