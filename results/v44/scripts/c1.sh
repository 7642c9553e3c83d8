#!/usr/bin/env bash
# v44 call 1. On an H200: v42's call 2 (the peel A/B, the sparse decode rule row and three unified benches for the
# BF16 MTP line's median; needs build/v42 carried), nothing else. On another GPU: knock_ab.py, where a keys-as-rows
# step's time goes (needs build/v44 carried).
. scripts/call-prologue.sh v44 c1
if grep -q H200 $o/times.txt; then bash results/v42/scripts/c2.sh; exit 0; fi
step knock 420 python3 results/v44/scripts/knock_ab.py $o/knock.jsonl > $o/knock.log 2>&1
cat $o/times.txt; grep -i "error\|Traceback" -A5 $o/knock.log | head -20
python3 results/v38/scripts/summary.py $o/knock.jsonl base
