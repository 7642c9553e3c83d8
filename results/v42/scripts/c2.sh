#!/usr/bin/env bash
# v42 call 2, only on an H200 (on any other GPU it stops after writing the GPU's name): the probes' A/B as call 1 ran
# it on an H100 (peel_ab.py with the power and clock log); the sparse decode bench with the H200 table and with the
# rules (v41 item 3's sm90 row, unmeasured on the H200); the unified bench of MTP verify and the long requests three
# times on the library as it is (v38's kernels and table), for the BF16 MTP line's median. Needs build/v42 carried.
. scripts/call-prologue.sh v42 c2
if ! grep -q H200 $o/times.txt; then cat $o/times.txt; exit 0; fi
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 100 > $o/power.csv &
smi=$!
step ab 330 python3 results/v42/scripts/peel_ab.py $o/ab.jsonl $o/sustained.jsonl > $o/ab.log 2>&1
kill $smi
step sparse 100 python3 -m pagedattn.cli bench --workload sparse-decode --providers pagedattn pagedattn-default \
  --json $o/bench-sparse-decode.json > $o/bench-sparse-decode.log 2>&1
for r in 1 2 3; do
  step bench$r $(( (575 - ($(date +%s) - t0)) / (4 - r) )) python3 -m pagedattn.cli bench --workload mtp-verify \
    long-request --providers pagedattn --json $o/bench-unified-$r.json > $o/bench-unified-$r.log 2>&1
done
cat $o/times.txt; grep -i "fail\|error\|Traceback" $o/ab.log | head -5
python3 results/v38/scripts/summary.py $o/ab.jsonl base
cat $o/sustained.jsonl
grep -E "^sparse" $o/bench-sparse-decode.log | cut -c1-170
for r in 1 2 3; do grep -A1 "^Ceilings" $o/bench-unified-$r.log | head -2; grep -E "^(mtp|long)" $o/bench-unified-$r.log | cut -c1-120; done
