#!/usr/bin/env bash
# v32 call 5: the mixed batch re-tuned with each call candidate timed in the launches its profile would make
# (tune.planned_call; call 4 timed the call buckets in one launch and kept the BF16 call on the one-launch wgmma
# kernel), fresh results file; GPU tests of the tuner's mixed batch, the profile layer and the unified kernel;
# the unified bench on the new table; the partition's A/B (partition_ab.py)
. scripts/call-prologue.sh v32 c5
step tune 250 timeout -s INT 240 python3 -m pagedattn.cli tune --kernel unified --workload mixed-batch \
  --max-candidates 12 --jobs 12 --results $o/tune-mixed.jsonl --report $o/profiles-mixed.md > $o/tune-mixed.log 2>&1
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
step tests 150 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified.py tests/test_profiles.py \
  tests/test_tune.py -k "not test_tune.py or mixed" > $o/tests.log 2>&1
step bench 150 python3 -m pagedattn.cli bench --workload mtp-verify long-request gqa-decode gqa-verify mixed-batch \
  dense-prefill --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
step ab 120 python3 results/v32/scripts/partition_ab.py $o/partition-ab.jsonl > $o/partition-ab.log 2>&1
tar czf $o/logs.tgz -C $o tune-mixed.jsonl tune-mixed.log partition-ab.log && rm $o/tune-mixed.jsonl $o/tune-mixed.log $o/partition-ab.log
cat $o/times.txt; grep "^| unified | mixed" $o/profiles-mixed.md | head -4
tail -3 $o/tests.log; grep -E "^(mixed|dense)" $o/bench-unified-h200.log | cut -c1-140; cut -c1-700 $o/partition-ab.jsonl
