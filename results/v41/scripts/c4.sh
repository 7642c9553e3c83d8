#!/usr/bin/env bash
# v41 call 4 (any sm90 GPU; an H100 came): the sparse decode bench with the GPU's table (pagedattn) and with the
# rules after item 3's sm90 row for FP8 sparse decode on keys-as-rows (pagedattn-default)
. scripts/call-prologue.sh v41 c4
step bench 300 python3 -m pagedattn.cli bench --workload sparse-decode --providers pagedattn pagedattn-default \
  --json $o/bench-sparse-decode.json > $o/bench-sparse-decode.log 2>&1
cat $o/times.txt; grep -A3 "^Ceilings" $o/bench-sparse-decode.log | head -4
grep -E "^sparse" $o/bench-sparse-decode.log | cut -c1-170
