#!/usr/bin/env bash
# v41 calls 1 and 2 (argument: c1 or c2; call 2 ran it after call 1's fixes): the streaming merge's A/B
# (stream_ab.py) with a power and clock log, then the GPU tests of both Gluon unified kernels and the merge through
# the probes (stream_patch.py); needs build/v41 carried (make_variants.py)
. scripts/call-prologue.sh v41 ${1:-c1}
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 100 > $o/power.csv &
smi=$!
step ab 330 python3 results/v41/scripts/stream_ab.py $o/ab.jsonl $o/sustained.jsonl > $o/ab.log 2>&1
kill $smi
step tests $(( 560 - ($(date +%s) - t0) )) python3 -m pytest -q -n 8 -p no:cacheprovider -p stream_patch \
  tests/test_verify_wgmma.py tests/test_unified_keys_rows.py tests/test_merge.py > $o/tests.log 2>&1
cat $o/times.txt; tail -n 3 $o/tests.log; grep -i "fail\|error\|Traceback" $o/ab.log | head -5
python3 results/v41/scripts/summary.py $o/ab.jsonl
cat $o/sustained.jsonl
