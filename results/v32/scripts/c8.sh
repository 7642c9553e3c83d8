#!/usr/bin/env bash
# v32 call 8: the unified kernel's short launch on a per-sequence grid (BY_SEQUENCE, perf-notes v32 item 6) moved the
# unified hash: every unified bucket re-measured in one pass (its previous profiles and the no-table one; short
# buckets before their calls), then the mixed-batch bench, the empty short launch's cost (empty_short.py) and the
# unified kernel's GPU tests; steps in order of need, each writing under $o as it ends
. scripts/call-prologue.sh v32 c8
step tune 135 timeout -s INT 130 python3 -m pagedattn.cli tune --kernel unified --max-candidates 2 --jobs 12 \
  --results $o/tune.jsonl --report $o/profiles.md > $o/tune.log 2>&1
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
step bench 40 python3 -m pagedattn.cli bench --workload mixed-batch --providers pagedattn pagedattn-default \
  --json $o/bench-mixed-h200.json > $o/bench-mixed-h200.log 2>&1
step empty 25 python3 results/v32/scripts/empty_short.py $o/empty-short.jsonl > $o/empty-short.log 2>&1
step tests 40 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified.py > $o/tests.log 2>&1
cat $o/times.txt; tail -2 $o/tune.log; grep -E "^mixed" $o/bench-mixed-h200.log | cut -c1-140; cat $o/empty-short.log
tail -2 $o/tests.log
