#!/usr/bin/env bash
# v35 call 3: short launches at a group of 8 and at head size 64, verify of 64 rows (rows_more_ab.py)
. scripts/call-prologue.sh v35 c3
step rows 480 python3 results/v35/scripts/rows_more_ab.py $o/rows_more.jsonl > $o/rows_more.log 2>&1
cat $o/times.txt; grep -c '"case"' $o/rows_more.log; grep FAIL $o/rows_more.log | head
