#!/usr/bin/env bash
# v31 call 4: the whole GPU suite on the final tree (the merge launch's refactor, call 2's table)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c4; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
timeout 480 python3 -m pytest -q -n 8 -p no:cacheprovider tests > $o/gpu-tests.log 2>&1
echo "gpu tests rc $? $(el) s" >> $o/times.txt
cat $o/times.txt; tail -4 $o/gpu-tests.log | cut -c1-300
