#!/usr/bin/env bash
# v31 call 5: the in-kernel merge's v2 (make_variants.py: each lse loaded and each line dropped by one thread; a unit
# as wide as 64 values per thread allow): the keys-as-rows GPU tests through it, then the long requests' A/B against
# the library, v1 and v2 without the discard; needs build/v31 carried
set -u
export PYTHONPATH=$PWD:$PWD/build/v31:$PWD/results/v31/scripts PYTHONUNBUFFERED=1
o=$OUT/c5; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
FUSED_MODULE=ukr_fused_v2 timeout 150 python3 -m pytest -q -x -n 8 -p fused_patch tests/test_unified_keys_rows.py > $o/tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/times.txt
timeout 200 python3 results/v31/scripts/fused_ab.py $o/ab.jsonl --long > $o/ab.log 2>&1
echo "ab rc $? $(el) s" >> $o/times.txt
cat $o/times.txt; tail -2 $o/tests.log; cut -c1-700 $o/ab.log | tail -4
