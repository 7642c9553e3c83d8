#!/usr/bin/env bash
# v30 call 5: the keys-as-rows kernel's page-table prefetch beside the bounds read (build/v30, make_variants.py),
# a same-profile A/B; needs build/v30 carried
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c5; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 200 python3 results/v30/scripts/prefetch_ab.py $o/prefetch.jsonl > $o/prefetch.log 2>&1
echo "prefetch rc $? $(el) s" >> $o/times.txt
cat $o/times.txt; cut -c1-400 $o/prefetch.log | tail -6
