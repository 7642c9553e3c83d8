#!/usr/bin/env bash
# v25 call 4: the final tree and call 3's table: the sparse and unified benches (tuned table and no-table
# column), then the whole GPU suite
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c4; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/gpu.txt
timeout 215 python3 -m pagedattn.cli bench --workload sparse-prefill sparse-decode \
  --providers pagedattn pagedattn-default --json $o/bench-sparse-h200.json > $o/bench-sparse-h200.log 2>&1
echo "bench sparse rc $? $(el) s" >> $o/gpu.txt
timeout 120 python3 -m pagedattn.cli bench --workload mtp-verify long-request gqa-decode gqa-verify mixed-batch dense-prefill \
  --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
echo "bench unified rc $? $(el) s" >> $o/gpu.txt
timeout 250 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/gpu.txt
tail -2 $o/tests.log; cat $o/gpu.txt
