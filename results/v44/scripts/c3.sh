#!/usr/bin/env bash
# v44 call 3. On an H200: v42's call 2 (needs build/v42 carried), nothing else. On another GPU: the length sweep of
# the loop's copies issued but not waited for, of no copies, and of no split merge (sweep_ab.py; needs build/v44).
. scripts/call-prologue.sh v44 c3
if grep -q H200 $o/times.txt; then bash results/v42/scripts/c2.sh; exit 0; fi
step sweep 300 python3 results/v44/scripts/sweep_ab.py $o/sweep.jsonl nocopy nowait nomerge > $o/sweep.log 2>&1
cat $o/times.txt; grep -i "error\|Traceback" -A5 $o/sweep.log | head -20
python3 results/v38/scripts/summary.py $o/sweep.jsonl base
