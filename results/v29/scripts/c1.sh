#!/usr/bin/env bash
# v29 call 1: the GPU suite on v28's refactored sources and table (never run on a GPU), then the unified bench
# (the table changed one bucket in v28 call 7)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c1; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
git log --oneline -1 >> $o/times.txt
timeout 420 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/gpu-tests.log 2>&1
echo "gpu tests rc $? $(el) s" >> $o/times.txt
timeout $(( 585 - $(el) )) python3 -m pagedattn.cli bench --workload mtp-verify long-request gqa-decode gqa-verify mixed-batch dense-prefill \
  --providers pagedattn --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
echo "bench unified rc $? $(el) s" >> $o/times.txt
cat $o/times.txt; tail -3 $o/gpu-tests.log; grep -E "FAILED|ERROR" $o/gpu-tests.log | head -20
grep -E "^\| (mtp|long|gqa|mixed|dense|ceil)" $o/bench-unified-h200.log | cut -c1-200
