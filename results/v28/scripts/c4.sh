#!/usr/bin/env bash
# v28 call 4: the read ceiling of the paged caches' own access pattern (results/v28/scripts/paged_read.py);
# first the new GPU tests (NaN bit patterns past each sequence's length, both Gluon unified kernels)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c4; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 120 python3 -m pytest -q -p no:cacheprovider -n 8 -k nan_bytes tests/test_unified_keys_rows.py \
    tests/test_verify_wgmma.py > $o/tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/times.txt
timeout 400 python3 results/v28/scripts/paged_read.py $o/paged_read.json > $o/probe.log 2>&1
echo "paged read rc $? $(el) s" >> $o/times.txt
tail -3 $o/tests.log; cat $o/times.txt; tail -c 3000 $o/probe.log
