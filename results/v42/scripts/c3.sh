#!/usr/bin/env bash
# v42 call 3: on an H200, call 2 (c2.sh, writes under $OUT/c2); on another GPU, the one-warpgroup keys-as-rows form at
# 64 packed rows against the dispatcher's two-warpgroup form (wg1_ab.py)
. scripts/call-prologue.sh v42 c3
if grep -q H200 $o/times.txt; then exec bash results/v42/scripts/c2.sh; fi
step ab 400 python3 results/v42/scripts/wg1_ab.py $o/ab.jsonl > $o/ab.log 2>&1
cat $o/times.txt; grep -i "fail\|error\|Traceback" $o/ab.log | head -5
python3 results/v38/scripts/summary.py $o/ab.jsonl base
