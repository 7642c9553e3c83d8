#!/usr/bin/env bash
# v50 call 9 (outputs in c3), on the same H200 with call 7's table: a wider tuner pass over the FP8 long request at q=1 alone (up to
# 40 candidates, where the re-tune's pass measured 8), to see whether a profile the re-tune did not reach takes it over
# the 60 % line; then the long-request bench. Brings back the table the pass wrote.
mkdir -p $OUT/c3; t0=$(date +%s)
timeout -s INT 170 python3 -m pagedattn.cli tune --kernel unified --workload long-request \
  --match "q=1 kv=131072 16q/1kv" --max-candidates 40 --min-gain 0.004 --jobs 12 \
  --results $OUT/c3/tune-q1.jsonl --report $OUT/c3/profiles-q1.md > $OUT/c3/tune.log 2>&1
echo "tune rc $? $(( $(date +%s)-t0 )) s"; cp pagedattn/profiles/tables/NVIDIA_H200.json $OUT/c3/; tail -5 $OUT/c3/tune.log
python3 -m pagedattn.cli bench --workload long-request --providers pagedattn pagedattn-default \
  --json $OUT/c3/bench.json > $OUT/c3/bench.log 2>&1; echo "bench rc $?"
grep -A1 "^Ceilings" $OUT/c3/bench.log | tail -1; grep -E "16q/1kv" $OUT/c3/bench.log | cut -c1-120
