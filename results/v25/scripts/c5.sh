#!/usr/bin/env bash
# v25 call 5: a probe (rowsums.patch applied to the tree): the exchange kernel's registers and programs per SM
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c5; mkdir -p $o
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/gpu.txt
timeout 230 python3 build/v26/fp8_regs_probe.py $o/fp8_regs_probe.jsonl > $o/fp8_regs_probe.log 2>&1
echo "probe rc $?" >> $o/gpu.txt
cat $o/gpu.txt; tail -12 $o/fp8_regs_probe.log
