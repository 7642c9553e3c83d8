#!/usr/bin/env bash
# v42, for an H200: the carveout probes (carve_ab.py, 5 rounds), one unified bench of MTP verify and the long
# requests on the library as it is, the sparse decode bench with and without the GPU's table (v41 item 3's rule row),
# then ncu's launch statistics of the q=4 long request under the probes. Needs build/v42 carried.
. scripts/call-prologue.sh v42 c7
step ab 130 python3 results/v42/scripts/carve_ab.py $o/ab.jsonl 5 > $o/ab.log 2>&1
step bench 70 python3 -m pagedattn.cli bench --workload mtp-verify long-request \
  --providers pagedattn --json $o/bench-unified.json > $o/bench-unified.log 2>&1
step sparse 60 python3 -m pagedattn.cli bench --workload sparse-decode --providers pagedattn pagedattn-default \
  --json $o/bench-sparse-decode.json > $o/bench-sparse-decode.log 2>&1
step ncu 40 ncu --kernel-name regex:unified_keys_rows --section LaunchStats --section MemoryWorkloadAnalysis --csv \
  python3 results/v42/scripts/carve_ab.py --check > $o/ncu.csv 2> $o/ncu.err
cat $o/times.txt; grep -i "fail\|error\|Traceback" -A3 $o/ab.log | head -20
python3 results/v38/scripts/summary.py $o/ab.jsonl copy
grep -E '"(Shared Memory Configuration Size|L1/TEX Hit Rate|Duration)"' $o/ncu.csv | cut -c1-200
grep -E "^sparse" $o/bench-sparse-decode.log | cut -c1-170
grep -A1 "^Ceilings" $o/bench-unified.log | head -2; grep -E "^(mtp|long)" $o/bench-unified.log | cut -c1-120
