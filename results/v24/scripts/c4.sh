#!/usr/bin/env bash
# v24 call 4: the final tree (call 3's split rule in the dispatcher): the unified and sparse benches with
# the tuned table and the no-table column, then the whole GPU suite
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c4; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/gpu.txt
timeout 170 python3 -m pagedattn.cli bench --workload mtp-verify long-request gqa-decode gqa-verify mixed-batch dense-prefill \
  --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
echo "bench unified rc $? $(el) s" >> $o/times.txt
timeout 120 python3 -m pagedattn.cli bench --workload sparse-prefill sparse-decode \
  --providers pagedattn pagedattn-default --json $o/bench-sparse-h200.json > $o/bench-sparse-h200.log 2>&1
echo "bench sparse rc $? $(el) s" >> $o/times.txt
timeout 290 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/times.txt
tail -2 $o/tests.log; cat $o/times.txt
