#!/usr/bin/env bash
# v31 call 1: the keys-as-rows kernel's GPU tests through the in-kernel merge (build/v31, make_variants.py), twice,
# then a same-profile A/B against the library; needs build/v31 carried
set -u
export PYTHONPATH=$PWD:$PWD/build/v31:$PWD/results/v31/scripts PYTHONUNBUFFERED=1
o=$OUT/c1; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 150 python3 -m pytest -q -x -n 8 -p fused_patch tests/test_unified_keys_rows.py > $o/tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/times.txt
timeout 200 python3 results/v31/scripts/fused_ab.py $o/ab.jsonl > $o/ab.log 2>&1
echo "ab rc $? $(el) s" >> $o/times.txt
cat $o/times.txt; tail -3 $o/tests.log; cut -c1-600 $o/ab.log | tail -8
