#!/usr/bin/env bash
# v26 call 1: the sparse kernels after v26's edits (padded token rows read without bounds; the exchange
# kernel's growth decision by a warp vote): their GPU tests, then the A/B against af25846's files
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c1; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/gpu.txt
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_sparse_exchange.py tests/test_sparse.py tests/test_sparse_keys_rows.py > $o/tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/times.txt
timeout 380 python3 results/v26/scripts/exch_ab.py $o/exch_ab.jsonl > $o/exch_ab.log 2>&1
echo "ab rc $? $(el) s" >> $o/times.txt
tail -3 $o/tests.log; cat $o/times.txt; tail -3 $o/exch_ab.log
