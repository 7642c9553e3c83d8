#!/usr/bin/env bash
# v50 calls 10-11 (neither started), only on an H200 (on any other GPU it stops after writing the GPU's name): the MTP verify and
# long-request bench of the landed library (v44 item 6 with its re-tuned table) twice, for the FP8 long request at
# q=1 and BF16 MTP on a second machine (calls 7-9 had a 4.66 TB/s one; the q=1 time does not follow the ceiling).
. scripts/call-prologue.sh v50 c10
if ! grep -q H200 $o/times.txt; then cat $o/times.txt; exit 0; fi
for i in 1 2; do
  step bench-$i 120 python3 -m pagedattn.cli bench --workload mtp-verify long-request \
    --providers pagedattn pagedattn-default --json $o/bench-$i.json > $o/bench-$i.log 2>&1
  grep -A1 "^Ceilings" $o/bench-$i.log | tail -1
  grep -E "kv=32768 (16q/1kv|32q/2kv) d256 bf1|kv=131072 16q/1kv" $o/bench-$i.log | cut -c1-120
done
cat $o/times.txt
