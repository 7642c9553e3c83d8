#!/usr/bin/env bash
# v43 call 3 (any sm90 GPU): ws_ab.py's check and A/B (3 rounds) with the page-table read ahead in the producer, then
# ncu of the q=4 long request's ws kernel (s4v2ah), third launch
. scripts/call-prologue.sh v43 c3
step check 100 python3 results/v43/scripts/ws_ab.py --check $o/check.jsonl > $o/check.log 2>&1
step ab 200 python3 results/v43/scripts/ws_ab.py $o/ab.jsonl 3 > $o/ab.log 2>&1
step ncu 90 ncu --kernel-name regex:ws_fp8 --launch-skip 2 --launch-count 1 --clock-control none --set full --csv \
  --page details python3 results/v43/scripts/ws_ab.py --one s4v2ah > $o/ncu.csv 2> $o/ncu.err
cat $o/times.txt; grep -c ok $o/check.log; grep -i "FAIL\|error\|Traceback" -A3 $o/check.log $o/ab.log | head -30
python3 results/v38/scripts/summary.py $o/ab.jsonl base
grep -E '"(Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Registers Per Thread|Issue Slots Busy|No Eligible|Active Warps Per Scheduler|Eligible Warps Per Scheduler)"' $o/ncu.csv | cut -d, -f13- | head -20
