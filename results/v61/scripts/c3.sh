#!/usr/bin/env bash
# v61 call 3, from main with v52's patch landed and call 2's re-tuned NVIDIA_H200.json; only on an H200 (elsewhere it
# stops after writing the GPU's name): the MTP verify and long-request bench twice more, for medians of three with
# call 2's (the rows at the lines: the FP8 long request at q=1, BF16 MTP at 32,768 keys), then the other unified
# workloads (GQA decode and verify, dense prefill, mixed batch) once, whose profiles the re-tune kept.
. scripts/call-prologue.sh v61 c3
if ! grep -q H200 $o/times.txt; then cat $o/times.txt; exit 0; fi
for i in 1 2; do
  step bench-$i 120 python3 -m pagedattn.cli bench --workload mtp-verify long-request \
    --providers pagedattn pagedattn-default --json $o/bench-$i.json > $o/bench-$i.log 2>&1
  grep -A1 "^Ceilings" $o/bench-$i.log | tail -1
  grep -E "kv=32768 (16q/1kv|32q/2kv) d256 bf1|kv=131072 16q/1kv" $o/bench-$i.log | cut -c1-120
done
step bench-rest 300 python3 -m pagedattn.cli bench --workload gqa-decode gqa-verify dense-prefill mixed-batch \
  --providers pagedattn pagedattn-default --json $o/bench-rest.json > $o/bench-rest.log 2>&1
grep -A4 "^Ceilings" $o/bench-rest.log | head -5; grep -E "^(gqa|dense|mixed)" $o/bench-rest.log | cut -c1-130
cat $o/times.txt
