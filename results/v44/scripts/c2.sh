#!/usr/bin/env bash
# v44 call 2. On an H200: v42's call 2 (needs build/v42 carried), nothing else. On another GPU: the knock-outs'
# combinations on the bench cases (knock_ab.py), then the length sweep of the main knock-outs (sweep_ab.py); needs
# build/v44 carried.
. scripts/call-prologue.sh v44 c2
if grep -q H200 $o/times.txt; then bash results/v42/scripts/c2.sh; exit 0; fi
step knock 240 python3 results/v44/scripts/knock_ab.py $o/knock.jsonl nolo nocopy_nopv nocopy_novote nocopy_nopv_novote \
  nocopy_nopv_novote_nolo > $o/knock.log 2>&1
step sweep 300 python3 results/v44/scripts/sweep_ab.py $o/sweep.jsonl nocopy nopv novote nocopy_nopv_novote \
  > $o/sweep.log 2>&1
cat $o/times.txt; grep -i "error\|Traceback" -A5 $o/knock.log $o/sweep.log | head -20
python3 results/v38/scripts/summary.py $o/knock.jsonl base
python3 results/v38/scripts/summary.py $o/sweep.jsonl base
