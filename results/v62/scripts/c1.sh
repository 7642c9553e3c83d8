#!/usr/bin/env bash
# v62 call 1, only on an H200 (on any other GPU it stops after writing the GPU's name): the q=4 FP8 long request's
# parts on today's keys-as-rows kernel (v44's knock-outs, built by make_knockouts.py into build/v62, carried): the bench
# cases with no loop copies, no loop, no merge; the length sweep with and without loop copies (per step and fixed
# cost); then two benches of MTP verify and the long requests for their TFLOP/s against the in-run matmul rate.
. scripts/call-prologue.sh v62 c1
if ! grep -q H200 $o/times.txt; then cat $o/times.txt; exit 0; fi
step knock 150 python3 results/v44/scripts/knock_ab.py $o/knock.jsonl nocopy noloop nomerge noloop_nomerge > $o/knock.log 2>&1
step sweep 120 python3 results/v44/scripts/sweep_ab.py $o/sweep.jsonl nocopy > $o/sweep.log 2>&1
for r in 1 2; do
  step bench$r "$(left)" python3 -m pagedattn.cli bench --workload mtp-verify long-request --providers pagedattn \
    --json $o/bench-$r.json > $o/bench-$r.log 2>&1
done
cat $o/times.txt; grep -i "error\|Traceback" -A5 $o/knock.log $o/sweep.log | head -20
python3 results/v38/scripts/summary.py $o/knock.jsonl base
python3 results/v44/scripts/fit_sweep.py $o/sweep.jsonl
for r in 1 2; do grep -A1 "^Ceilings" $o/bench-$r.log | head -2; grep -E "^(mtp|long)" $o/bench-$r.log | cut -c1-150; done
