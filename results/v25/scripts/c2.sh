#!/usr/bin/env bash
# v25 call 2: the sparse Gluon kernels after v25's kernel edits: sparse GPU tests, then the A/B against v24's files
# (call 1 ran the same with o=$OUT/c1, after the first edit only: K's conversion without the byte permute)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c2; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/gpu.txt
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_sparse_exchange.py tests/test_sparse.py tests/test_sparse_keys_rows.py > $o/tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/times.txt
timeout 330 python3 build/v25/exch_ab.py $o/exch_ab.jsonl > $o/exch_ab.log 2>&1
echo "ab rc $? $(el) s" >> $o/times.txt
tail -3 $o/tests.log; cat $o/times.txt; tail -3 $o/exch_ab.log
