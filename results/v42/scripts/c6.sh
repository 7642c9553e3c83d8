#!/usr/bin/env bash
# v42 (any sm90 GPU): the shared-memory carveout probes (carve_ab.py, 5 rounds), then ncu's launch statistics of the
# q=4 long request's four launches (copy, copy, carve, carve); needs build/v42 carried (make_carveout.py)
. scripts/call-prologue.sh v42 c6
step ab 170 python3 results/v42/scripts/carve_ab.py $o/ab.jsonl 5 > $o/ab.log 2>&1
step ncu 35 ncu --kernel-name regex:unified_keys_rows --section LaunchStats --section MemoryWorkloadAnalysis --csv \
  python3 results/v42/scripts/carve_ab.py --check > $o/ncu.csv 2> $o/ncu.err
cat $o/times.txt; grep -i "fail\|error\|Traceback" -A3 $o/ab.log | head -20
python3 results/v38/scripts/summary.py $o/ab.jsonl copy
grep -E '"(Shared Memory Configuration Size|Driver Shared Memory Per Block|L1/TEX Hit Rate|Duration)"' $o/ncu.csv | cut -c1-200
