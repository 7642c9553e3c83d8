#!/usr/bin/env bash
# v32 call 3: the unified bench on call 2's table (the mixed batch partitioned), then the partition's A/B
# (partition_ab.py)
. scripts/call-prologue.sh v32 c3
step bench 300 python3 -m pagedattn.cli bench --workload mtp-verify long-request gqa-decode gqa-verify mixed-batch \
  dense-prefill --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
step ab 200 python3 results/v32/scripts/partition_ab.py $o/partition-ab.jsonl > $o/partition-ab.log 2>&1
cat $o/times.txt; grep -A6 "^Ceilings" $o/bench-unified-h200.log | head -3
grep -E "^(mtp|long|gqa|dense|mixed)" $o/bench-unified-h200.log | cut -c1-140; cut -c1-600 $o/partition-ab.log
