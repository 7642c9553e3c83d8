#!/usr/bin/env bash
# v36 call 1: a mixed batch's short sequences in two launches by query count (select.short_launches): the GPU tests
# of the profile layer, the unified kernel, the API, the tuner, the merge and the bench; the whole-call A/B against
# v35's one short launch (three_ab.py); the mixed-batch bench, table and no-table columns
. scripts/call-prologue.sh v36 c1
step tests 200 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_profiles.py tests/test_unified.py \
  tests/test_api.py tests/test_tune.py tests/test_merge.py tests/test_bench.py > $o/tests.log 2>&1
step three 330 python3 results/v36/scripts/three_ab.py $o/three.jsonl > $o/three.log 2>&1
step bench 60 python3 -m pagedattn.cli bench --workload mixed-batch --providers pagedattn pagedattn-default \
  --json $o/bench.json > $o/bench.log 2>&1
cat $o/times.txt; tail -3 $o/tests.log; grep FAIL $o/three.log | head
python3 -c "
import json
for l in open('$o/three.jsonl'):
    r = json.loads(l); print(r['case'][:60], {k: round(v * 1e3, 1) for k, v in r['ms'].items()}, {k: round(v, 3) for k, v in r['ratios'].items()})"
tail -8 $o/bench.log
