#!/usr/bin/env bash
# v43 call 9, only on an H200 (on any other GPU it stops after writing the GPU's name): ws_ab.py's A/B of the
# warp-specialized probe (3 rounds) where HBM is 1.4x the H100's, then one unified bench of MTP verify and the long
# requests on the library as it is (v38's kernels and table)
. scripts/call-prologue.sh v43 c9
if ! grep -q H200 $o/times.txt; then cat $o/times.txt; exit 0; fi
step ab 200 python3 results/v43/scripts/ws_ab.py $o/ab.jsonl 3 > $o/ab.log 2>&1
step bench 120 python3 -m pagedattn.cli bench --workload mtp-verify long-request --providers pagedattn \
  --json $o/bench-unified.json > $o/bench-unified.log 2>&1
cat $o/times.txt; grep -i "fail\|error\|Traceback" -A3 $o/ab.log | head -10
python3 results/v38/scripts/summary.py $o/ab.jsonl base
grep -A1 "^Ceilings" $o/bench-unified.log | head -2; grep -E "^(mtp|long)" $o/bench-unified.log | cut -c1-120
