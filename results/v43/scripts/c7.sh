#!/usr/bin/env bash
# v43 call 7 (any sm90 GPU): ws_ab.py's odd-shape check (every config, splits 1 / 3 / 16), then l2_ab.py: the ws
# kernel's per-SM rate against the library's with K/V held in L2
. scripts/call-prologue.sh v43 c7
step check 100 python3 results/v43/scripts/ws_ab.py --check $o/check.jsonl > $o/check.log 2>&1
step l2 90 python3 results/v43/scripts/l2_ab.py $o/l2.jsonl > $o/l2.log 2>&1
cat $o/times.txt; grep -c ok $o/check.log; grep -i "FAIL\|error\|Traceback" -A3 $o/check.log $o/l2.log | head -30
python3 results/v38/scripts/summary.py $o/l2.jsonl base
