#!/usr/bin/env bash
# v35 call 1: the Triton kernel's forms for 17-32 packed rows at head size 128 without a table (rows32_ab.py)
. scripts/call-prologue.sh v35 c1
step rows32 540 python3 results/v35/scripts/rows32_ab.py $o/rows32.jsonl > $o/rows32.log 2>&1
cat $o/times.txt; grep -c '"case"' $o/rows32.log; grep FAIL $o/rows32.log | head; tail -3 $o/rows32.log | cut -c1-300
