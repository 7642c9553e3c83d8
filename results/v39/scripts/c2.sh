#!/usr/bin/env bash
# v39 call 2, by the GPU that comes: on an H200, call 1 again (the lazy probe's A/B with power and clock log; call 1
# got an H100; this is the branch that ran, perf-notes v39 item 3); on another GPU, the first table of the unified
# kernels for it and the bench with and without it, as v40 call 1 ran it on an H100 (`gpu-session.sh retune`, which
# since v40 writes the table of the GPU it runs on; this script's own copy of that re-tune's passes was removed then)
. scripts/call-prologue.sh v39 c2
if grep -q H200 $o/times.txt; then
  exec bash results/v39/scripts/c1.sh  # writes under $OUT/c1
fi
exec bash results/v40/scripts/c1.sh  # writes under $OUT/c1
