#!/usr/bin/env bash
# v26 call 2: the tree after call 1 (its A/B kept both edits): memcheck over the sparse bad-index tests, the sparse
# table re-tuned (scripts/gpu-session.sh retune, KERNELS=sparse: the unified kernels' sources are unchanged), then
# the sparse bench (tuned table and no-table column) on the re-tuned table
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c2; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/gpu.txt
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider \
  tests/test_sparse.py tests/test_sparse_exchange.py tests/test_sparse_keys_rows.py \
  -k "invalid or padding or unknown_request or masks or pads_rows or counts" > $o/memcheck.log 2>&1
echo "memcheck rc $? $(el) s" >> $o/times.txt
KERNELS=sparse timeout 240 scripts/gpu-session.sh retune $o/retune 230 > $o/retune.log 2>&1
echo "retune rc $? $(el) s" >> $o/times.txt
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
timeout 215 python3 -m pagedattn.cli bench --workload sparse-prefill sparse-decode \
  --providers pagedattn pagedattn-default --json $o/bench-sparse-h200.json > $o/bench-sparse-h200.log 2>&1
echo "bench sparse rc $? $(el) s" >> $o/times.txt
tail -2 $o/memcheck.log; cat $o/gpu.txt $o/times.txt; tail -30 $o/bench-sparse-h200.log
