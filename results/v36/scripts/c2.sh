#!/usr/bin/env bash
# v36 call 2: the short launch's range set by SHORT_BLOCKS_PER_SEQUENCE (a second short launch at a group of 8 only):
# the GPU tests of the profile layer, the unified kernel, the tuner and the bench; the group-8 A/B against v35
. scripts/call-prologue.sh v36 c2
step tests 200 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_profiles.py tests/test_unified.py \
  tests/test_tune.py tests/test_bench.py tests/test_merge.py > $o/tests.log 2>&1
step three 300 python3 results/v36/scripts/three_ab.py $o/three.jsonl --group8 > $o/three.log 2>&1
cat $o/times.txt; tail -3 $o/tests.log; grep FAIL $o/three.log | head
python3 -c "
import json
for l in open('$o/three.jsonl'):
    r = json.loads(l); print(r['case'][:60], {k: round(v * 1e3, 1) for k, v in r['ms'].items()}, {k: round(v, 3) for k, v in r['ratios'].items()})"
