#!/usr/bin/env bash
# v26 call 5: the whole GPU suite on the final tree (call 4: the keys-as-rows vote) and call 4's re-tuned sparse table
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c5; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/gpu.txt
timeout 330 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/gpu.txt
tail -4 $o/tests.log; cat $o/gpu.txt
