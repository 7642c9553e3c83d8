#!/usr/bin/env bash
# v31 call 3: the unified and sparse benches on call 2's re-tuned table
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c3; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 150 python3 -m pagedattn.cli bench --workload mtp-verify long-request gqa-decode gqa-verify mixed-batch dense-prefill \
  --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
echo "bench unified rc $? $(el) s" >> $o/times.txt
timeout $(( 430 - $(el) )) python3 -m pagedattn.cli bench --workload sparse-prefill sparse-decode \
  --providers pagedattn pagedattn-default --json $o/bench-sparse-h200.json > $o/bench-sparse-h200.log 2>&1
echo "bench sparse rc $? $(el) s" >> $o/times.txt
cat $o/times.txt; grep -A6 "^Ceilings" $o/bench-unified-h200.log | head -3
grep -E "^(mtp|long|gqa|dense)" $o/bench-unified-h200.log | cut -c1-120
grep -E "^sparse" $o/bench-sparse-h200.log | cut -c1-140 | head -40
