#!/usr/bin/env bash
# v34 call 5: item 4's partition rule against v33's on calls of few sequences without a table (partition_rule_ab.py)
. scripts/call-prologue.sh v34 c5
step ab 300 python3 results/v34/scripts/partition_rule_ab.py $o/ab.jsonl > $o/ab.log 2>&1
cat $o/times.txt; cut -c1-600 $o/ab.log | tail -8
