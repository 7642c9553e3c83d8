#!/usr/bin/env bash
# v43 call 2 (any sm90 GPU): ws_ab.py's odd-shape check of the warp-specialized FP8 verify probe, then its A/B against
# the library on the FP8 long request at q=4 and FP8 MTP verify (3 rounds)
. scripts/call-prologue.sh v43 c2
step check 120 python3 results/v43/scripts/ws_ab.py --check $o/check.jsonl > $o/check.log 2>&1
step ab 300 python3 results/v43/scripts/ws_ab.py $o/ab.jsonl 3 > $o/ab.log 2>&1
cat $o/times.txt; grep -c ok $o/check.log; grep -i "FAIL\|error\|Traceback" -A3 $o/check.log $o/ab.log | head -30
python3 results/v38/scripts/summary.py $o/ab.jsonl base
