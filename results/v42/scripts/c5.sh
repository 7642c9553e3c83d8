#!/usr/bin/env bash
# v42 call 10 (any sm90 GPU): the head-dimension split of the keys-as-rows kernel (dsplit_ab.py); needs build/v42
# carried (make_dsplit.py)
. scripts/call-prologue.sh v42 c5
step ab 400 python3 results/v42/scripts/dsplit_ab.py $o/ab.jsonl > $o/ab.log 2>&1
cat $o/times.txt; grep -i "fail\|error\|Traceback" -A3 $o/ab.log | head -20
python3 results/v38/scripts/summary.py $o/ab.jsonl base
