#!/usr/bin/env bash
# v40 call 2, on an H100 (kind nvidia-h100-x1): the whole test suite on a second sm90 GPU (the H100 has no table:
# every call takes the sm90 rules, which call 1 found within 1.2 % of its best measured candidate), then the
# sparse workloads' bench there
. scripts/call-prologue.sh v40 c2
step tests 330 python3 -m pytest -q -n 8 -p no:cacheprovider tests > $o/tests.log 2>&1
step bench $(( 440 - ($(date +%s) - t0) )) python3 -m pagedattn.cli bench --workload sparse-decode sparse-prefill \
  --providers pagedattn --json $o/bench-sparse.json > $o/bench-sparse.log 2>&1
cat $o/times.txt; tail -n 3 $o/tests.log; grep -E "^(FAILED|ERROR)" $o/tests.log | head -20
grep -A3 "^Ceilings" $o/bench-sparse.log | head -4
grep -E "^sparse" $o/bench-sparse.log | cut -c1-160
