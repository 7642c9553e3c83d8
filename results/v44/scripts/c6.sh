#!/usr/bin/env bash
# v44 call 6. On an H200: call 5 (c5.sh), nothing else. On another GPU: where the q=4 loop's warps wait with and without
# its copies: ncu's per-SASS-line stall samples (SourceCounters, WarpStateStats) of the library's form, the loop without
# copies and the copies never waited for, at 131,072 keys (K/V mostly from HBM) and 65,536 (in L2). Needs build/v44.
. scripts/call-prologue.sh v44 c6
if grep -q H200 $o/times.txt; then bash results/v44/scripts/c5.sh; exit 0; fi
for run in "base 131072" "nocopy 131072" "nowait 131072" "base 65536" "nocopy 65536"; do
  set -- $run
  step "ncu-$1-$2" 100 ncu --kernel-name regex:unified_keys_rows --launch-skip 2 --launch-count 1 --clock-control none \
    --section SourceCounters --section WarpStateStats --page source \
    --print-source sass --csv python3 results/v44/scripts/one_call.py $1 4 $2 > $o/src-$1-$2.csv 2>> $o/ncu.err
done
cat $o/times.txt
for f in $o/src-*.csv; do echo "== $f"; python3 results/v43/scripts/stalls.py $f 12; done
