#!/usr/bin/env bash
# v32 call 7: the cost of a short-sequence launch whose programs all exit (empty_short.py)
. scripts/call-prologue.sh v32 c7
step empty 120 python3 results/v32/scripts/empty_short.py $o/empty-short.jsonl > $o/empty-short.log 2>&1
cat $o/times.txt; tail -5 $o/empty-short.log
