#!/usr/bin/env bash
# v34 call 3: item 4's partition rule (no short launch where the tokens leave no room for a short sequence; the
# untuned short launch cut into segments of at most 4,096 keys): the GPU tests of the profile layer, the unified
# kernel, the API and the tuner, then the mixed-batch and dense-prefill benches, table and no-table columns
. scripts/call-prologue.sh v34 c3
step tests 200 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_profiles.py tests/test_unified.py \
  tests/test_api.py tests/test_tune.py tests/test_merge.py > $o/tests.log 2>&1
step bench 200 python3 -m pagedattn.cli bench --workload mixed-batch dense-prefill --providers pagedattn \
  pagedattn-default --json $o/bench.json > $o/bench.log 2>&1
cat $o/times.txt; tail -3 $o/tests.log; tail -12 $o/bench.log
