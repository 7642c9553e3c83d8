#!/usr/bin/env bash
# v32 call 4: the tuner tunes a mixed batch's short-sequence launch as a bucket of its own (select.short_part_key):
# `pagedattn tune --workload mixed-batch`, resuming from call 2's records of the call buckets, then the GPU tests
# of the tuner's mixed batch, the profile layer and the unified kernel, the mixed-batch bench and the partition's
# A/B (partition_ab.py) on the new table
. scripts/call-prologue.sh v32 c4
cp results/v32/c2/retune/tune-rest.jsonl $o/tune-mixed.jsonl
step tune 300 timeout -s INT 290 python3 -m pagedattn.cli tune --kernel unified --workload mixed-batch \
  --max-candidates 12 --jobs 12 --results $o/tune-mixed.jsonl --report $o/profiles-mixed.md > $o/tune-mixed.log 2>&1
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
step tests 150 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified.py tests/test_profiles.py \
  tests/test_tune.py -k "not test_tune.py or mixed" > $o/tests.log 2>&1
step bench 90 python3 -m pagedattn.cli bench --workload mixed-batch --providers pagedattn pagedattn-default \
  --json $o/bench-mixed-h200.json > $o/bench-mixed-h200.log 2>&1
step ab 150 python3 results/v32/scripts/partition_ab.py $o/partition-ab.jsonl > $o/partition-ab.log 2>&1
cat $o/times.txt; tail -4 $o/tune-mixed.log; tail -3 $o/tests.log; grep -E "^mixed" $o/bench-mixed-h200.log | cut -c1-140
cut -c1-700 $o/partition-ab.log
