#!/usr/bin/env bash
# v44 call 5, only on an H200 (on any other GPU it stops after writing the GPU's name): the length sweep of the library
# and its loop without copies, the loop-less and merge-less knock-outs on the bench cases (items 3-4 on the H200), then
# two unified benches of MTP verify and the long requests on the library as it is (v38's kernels and table), for the
# BF16 MTP line's median. Needs build/v44 carried.
. scripts/call-prologue.sh v44 c5
if ! grep -q H200 $o/times.txt; then cat $o/times.txt; exit 0; fi
step sweep 150 python3 results/v44/scripts/sweep_ab.py $o/sweep.jsonl nocopy > $o/sweep.log 2>&1
step knock 150 python3 results/v44/scripts/knock_ab.py $o/knock.jsonl noloop nomerge nocopy > $o/knock.log 2>&1
for r in 1 2; do
  step bench$r 130 python3 -m pagedattn.cli bench --workload mtp-verify long-request --providers pagedattn \
    --json $o/bench-unified-$r.json > $o/bench-unified-$r.log 2>&1
done
cat $o/times.txt; grep -i "error\|Traceback" -A5 $o/sweep.log $o/knock.log | head -20
python3 results/v44/scripts/fit_sweep.py $o/sweep.jsonl
python3 results/v38/scripts/summary.py $o/knock.jsonl base
for r in 1 2; do grep -A1 "^Ceilings" $o/bench-unified-$r.log | head -2; grep -E "^(mtp|long)" $o/bench-unified-$r.log | cut -c1-120; done
