#!/usr/bin/env bash
# v44 call 8 (the H200 call 7 found): ukr_qbar's A/B on the two FP8 long requests (call 7 stopped before them), then
# call 5 (c5.sh: the sweep and knock-outs on the H200, two unified benches); needs build/v44 carried.
. scripts/call-prologue.sh v44 c8
step ab 90 python3 results/v44/scripts/fill_ab.py $o/ab.jsonl "B=1 q=1 kv=131072 16q/1kv d256 fp8" \
  "B=1 q=4 kv=131072 16q/1kv d256 fp8" > $o/ab.log 2>&1
cat $o/times.txt; grep -i "fail\|error\|Traceback" -A5 $o/ab.log | head; python3 results/v38/scripts/summary.py $o/ab.jsonl ukr_base
bash results/v44/scripts/c5.sh
