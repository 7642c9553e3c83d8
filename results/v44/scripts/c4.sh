#!/usr/bin/env bash
# v44 call 4. On an H200: v42's call 2 (needs build/v42 carried), nothing else. On another GPU: the fixed cost's
# knock-outs on the bench cases (knock_ab.py: no loop, with and without the merge, the partial stores and q; needs
# build/v44).
. scripts/call-prologue.sh v44 c4
if grep -q H200 $o/times.txt; then bash results/v42/scripts/c2.sh; exit 0; fi
step knock 300 python3 results/v44/scripts/knock_ab.py $o/knock.jsonl noloop noloop_nomerge noloop_noepi noloop_noq \
  noloop_noepi_nomerge_noq noepi noq nomerge > $o/knock.log 2>&1
cat $o/times.txt; grep -i "error\|Traceback" -A5 $o/knock.log | head -20
python3 results/v38/scripts/summary.py $o/knock.jsonl base
