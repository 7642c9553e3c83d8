#!/usr/bin/env bash
# v21 call 3: where the 6 % between two tuner passes comes from (allocation history or sustained load,
# nvidia-smi sampling clocks beside), the full GPU suite, the unified bench with clocks sampled
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c3; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 100 > $o/smi.csv 2>&1 &
SMI=$!
for m in fresh junk-freed junk-kept load; do timeout 90 python3 build/v21/var_probe.py $m >> $o/var.jsonl 2>> $o/var.log; done
timeout 60 python3 build/v21/var_probe.py fresh fp8 >> $o/var.jsonl 2>> $o/var.log
echo "var rc $? $(el) s" >> $o/times.txt
timeout 150 python3 -m pagedattn.cli bench --workload mtp-verify long-request gqa-decode gqa-verify mixed-batch dense-prefill \
  --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
echo "bench rc $? $(el) s" >> $o/times.txt
timeout 240 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/gpu-tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/times.txt
kill $SMI
tail -3 $o/gpu-tests.log; cat $o/var.jsonl | cut -c1-200; cat $o/times.txt
tar czf $OUT/c3.tgz -C $OUT c3
