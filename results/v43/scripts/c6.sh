#!/usr/bin/env bash
# v43 call 6 (any sm90 GPU): ws_ab.py's check and A/B (5 rounds) of ccah, ccahq (q read by consumer 0 after the split) and ccahqc (one partial per program)
. scripts/call-prologue.sh v43 c6
step check 100 python3 results/v43/scripts/ws_ab.py --check $o/check.jsonl > $o/check.log 2>&1
step ab 200 python3 results/v43/scripts/ws_ab.py $o/ab.jsonl 5 > $o/ab.log 2>&1
cat $o/times.txt; grep -c ok $o/check.log; grep -i "FAIL\|error\|Traceback" -A3 $o/check.log $o/ab.log | head -30
python3 results/v38/scripts/summary.py $o/ab.jsonl base
