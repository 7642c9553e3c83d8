#!/usr/bin/env bash
# v35 call 2: item 1's dispatch (the short launch's own class and rows, the 17-32-row verify row, the near bucket's
# query-block boundary): the GPU tests of the profile layer, the unified kernel, the API, the tuner and the merge;
# the dispatch against v34's on call 1's cases (dispatch_ab.py); the mixed-batch bench, table and no-table columns
. scripts/call-prologue.sh v35 c2
step tests 200 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_profiles.py tests/test_unified.py \
  tests/test_api.py tests/test_tune.py tests/test_merge.py > $o/tests.log 2>&1
step dispatch 300 python3 results/v35/scripts/dispatch_ab.py results/v35/c1/rows32.jsonl $o/dispatch.jsonl \
  > $o/dispatch.log 2>&1
step bench 150 python3 -m pagedattn.cli bench --workload mixed-batch --providers pagedattn pagedattn-default \
  --json $o/bench.json > $o/bench.log 2>&1
cat $o/times.txt; tail -3 $o/tests.log; grep FAIL $o/dispatch.log | head
python3 -c "
import json
for l in open('$o/dispatch.jsonl'):
    r = json.loads(l); print(r['case'][:50], round(r['dispatch_ratio'], 3), round(r['untuned_ratio'], 3))"
tail -8 $o/bench.log
