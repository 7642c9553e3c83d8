#!/usr/bin/env bash
# v32 call 6: the bench's no-table column runs a mixed batch in the launches select.partition makes of the untuned
# choices (it forced one launch before); its GPU test, then the mixed-batch and dense-prefill benches
. scripts/call-prologue.sh v32 c6
step tests 120 python3 -m pytest -q -n 4 -p no:cacheprovider tests/test_bench.py > $o/tests.log 2>&1
step bench 120 python3 -m pagedattn.cli bench --workload mixed-batch dense-prefill --providers pagedattn \
  pagedattn-default --json $o/bench-mixed-h200.json > $o/bench-mixed-h200.log 2>&1
cat $o/times.txt; tail -2 $o/tests.log; grep -E "^(mixed|dense)" $o/bench-mixed-h200.log | cut -c1-150
python3 -c "import json; [print(r['case'], r['provider'], r['profile']['short']) for r in json.load(open('$o/bench-mixed-h200.json'))['results']]"
