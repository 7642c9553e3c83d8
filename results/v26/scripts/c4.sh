#!/usr/bin/env bash
# v26 call 4: the sparse keys-as-rows kernel's growth decision by a warp vote: the sparse GPU tests (stop if any
# fails: call 2's table stays current for the reverted tree), the A/B against 82c26f8's file, the sparse table
# re-tuned, then the sparse bench (tuned table and no-table column) on it
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c4; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/gpu.txt
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_sparse_exchange.py tests/test_sparse.py tests/test_sparse_keys_rows.py > $o/tests.log 2>&1
rc=$?
echo "tests rc $rc $(el) s" >> $o/times.txt
if [ $rc -ne 0 ]; then tail -30 $o/tests.log; cat $o/times.txt; exit 1; fi
timeout 120 python3 results/v26/scripts/krows_ab.py $o/krows_ab.jsonl > $o/krows_ab.log 2>&1
echo "ab rc $? $(el) s" >> $o/times.txt
KERNELS=sparse timeout 240 scripts/gpu-session.sh retune $o/retune 230 > $o/retune.log 2>&1
echo "retune rc $? $(el) s" >> $o/times.txt
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
timeout 215 python3 -m pagedattn.cli bench --workload sparse-prefill sparse-decode \
  --providers pagedattn pagedattn-default --json $o/bench-sparse-h200.json > $o/bench-sparse-h200.log 2>&1
echo "bench sparse rc $? $(el) s" >> $o/times.txt
tail -2 $o/tests.log; cat $o/gpu.txt $o/times.txt; cat $o/krows_ab.log | cut -c1-400; grep "sparse-" $o/bench-sparse-h200.log | grep -v default
