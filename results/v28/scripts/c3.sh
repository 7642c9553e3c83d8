#!/usr/bin/env bash
# v28 call 3: does the fence before Q.K^T's wgmma (`fence_async_shared`: MEMBAR.ALL.CTA in SASS) wait for
# the next tile's copies or page-table loads issued just before it? main's kernel against the fence moved
# ahead of them and against the copies issued after the softmax's fences, at 2 and 3 ring stages
# (results/v28/scripts/variant_ab.py)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c3; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 300 python3 results/v28/scripts/variant_ab.py $o/fence_ab.jsonl ukr_main ukr_fence_first ukr_copies_late \
    ukr_main@st3 ukr_fence_first@st3 ukr_copies_late@st3 > $o/probe.log 2>&1
echo "ab rc $? $(el) s" >> $o/times.txt
cat $o/times.txt; cut -c1-1500 $o/probe.log
