#!/usr/bin/env bash
# call 5: the BF16 MTP 16q/1kv 32,768 bucket re-tuned at 1 % min-gain from s13/st5 (call 3's A/B: 4 % faster
# than the s12/st4 call 2 kept), then the unified bench with the final table
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c5; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
timeout 120 python3 -m pagedattn.cli tune --kernel unified --jobs 12 --quiet --workload mtp-verify \
  --match "kv=32768 16q/1kv d256 bf16" --first-guess m64/n16/s13/w4/st5/ahead/wgmma --max-candidates 8 --min-gain 0.01 \
  --results $o/tune-bf16.jsonl --report $o/profiles-bf16.md > $o/tune-bf16.log 2>&1
echo "tune rc $? $(el) s" >> $o/times.txt
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/NVIDIA_H200.json
timeout 150 python3 -m pagedattn.cli bench --workload mtp-verify long-request gqa-decode gqa-verify mixed-batch dense-prefill \
  --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
echo "bench rc $? $(el) s" >> $o/times.txt
grep -E "bf16|fp8|HBM read" $o/bench-unified-h200.log | grep -v "^\[" | head -30; cat $o/times.txt
tar czf $OUT/c5.tgz -C $OUT c5
