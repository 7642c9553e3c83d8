#!/usr/bin/env bash
# v43 call 10 (any sm90 GPU): ws_ab.py's odd-shape check and A/B (3 rounds) of ccahqc against sv5 / sv5n (one fp16 V slot
# shared in tile order, 5 ring stages), then l2_ab.py with K/V held in L2
. scripts/call-prologue.sh v43 c10
step check 90 python3 results/v43/scripts/ws_ab.py --check $o/check.jsonl > $o/check.log 2>&1
step ab 150 python3 results/v43/scripts/ws_ab.py $o/ab.jsonl 3 > $o/ab.log 2>&1
step l2 60 python3 results/v43/scripts/l2_ab.py $o/l2.jsonl > $o/l2.log 2>&1
cat $o/times.txt; grep -c ok $o/check.log; grep -i "FAIL\|error\|Traceback" -A3 $o/check.log $o/ab.log $o/l2.log | head -30
python3 results/v38/scripts/summary.py $o/ab.jsonl base
python3 results/v38/scripts/summary.py $o/l2.jsonl base
