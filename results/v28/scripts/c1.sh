#!/usr/bin/env bash
# v28 call 1: the unified keys-as-rows kernel with TMA page copies and a copy warp (the tree, branch
# wip/tma-pages): its GPU tests (the A/B runs whatever they say), then the A/B against main's kernel
# and the TMA form without a copy warp (results/v28/scripts/tma_ab.py)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c1; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 -x tests/test_unified_keys_rows.py > $o/tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/times.txt
timeout 240 python3 results/v28/scripts/tma_ab.py $o/tma_ab.jsonl > $o/probe.log 2>&1
echo "ab rc $? $(el) s" >> $o/times.txt
tail -25 $o/tests.log; cat $o/times.txt; cut -c1-1200 $o/probe.log
