#!/usr/bin/env bash
# v31 call 2: both H200 tables re-tuned after the merge launch's refactor in ops/common.py (both kernels' hashes
# moved; the merge kernel and its launch shapes are unchanged), then where the split long requests' and BF16 MTP's
# time goes, kernel by kernel, on the new table (scripts/kernel_times.py)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c2; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
KERNELS="sparse unified" scripts/gpu-session.sh retune /tmp/retune > $o/retune.log 2>&1
echo "retune rc $? $(el) s" >> $o/times.txt
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
tar czf $o/retune.tgz -C /tmp retune
timeout $(( 560 - $(el) )) python3 scripts/kernel_times.py $o/kernel-times.json "long-request:kv=131072 16q/1kv" \
  "mtp-verify:kv=32768 16q/1kv d256 bf16" > $o/kernel-times.log 2>&1
echo "kernel times rc $? $(el) s" >> $o/times.txt
cat $o/times.txt
grep -h "tuned .* buckets\|kept\|moved" /tmp/retune/tune-*.log | tail -20
tail -30 $o/kernel-times.log | cut -c1-200
