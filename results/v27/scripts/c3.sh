#!/usr/bin/env bash
# v27 call 3: the final tree (the vote and the epilogue's direct stores) with call 2's sparse table: the unified
# table re-tuned, both benches (tuned table and no-table columns), then the stamp probe (vote against direct)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c3; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
KERNELS=unified timeout 300 scripts/gpu-session.sh retune /tmp/retune > $o/retune.log 2>&1
echo "retune rc $? $(el) s" >> $o/times.txt
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
timeout 110 python3 -m pagedattn.cli bench --workload mtp-verify long-request gqa-decode gqa-verify mixed-batch dense-prefill \
  --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
echo "bench unified rc $? $(el) s" >> $o/times.txt
timeout 170 python3 -m pagedattn.cli bench --workload sparse-prefill sparse-decode \
  --providers pagedattn pagedattn-default --json $o/bench-sparse-h200.json > $o/bench-sparse-h200.log 2>&1
echo "bench sparse rc $? $(el) s" >> $o/times.txt
timeout $(( 585 - $(el) )) python3 results/v27/scripts/stamp_probe.py $o/stamps.json >> $o/times.txt 2>&1
echo "stamps rc $? $(el) s" >> $o/times.txt
cut -c1-1200 $o/times.txt; grep -B2 -A3 "tuned .* buckets" $o/retune.log; grep -E "^\| (mtp|long|gqa|mixed|dense|sparse)" $o/bench-*.log | grep -v default | cut -c1-200
