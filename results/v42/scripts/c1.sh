#!/usr/bin/env bash
# v42 call 1: the wgmma probes' A/B (peel_ab.py: base, bias, peel) with a power and clock log, then the GPU tests of
# the wgmma kernel (the working tree's library holds the peel form) and the API's graph and compile tests on it;
# needs build/v42 carried (make_variants.py)
. scripts/call-prologue.sh v42 c1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 100 > $o/power.csv &
smi=$!
step ab 330 python3 results/v42/scripts/peel_ab.py $o/ab.jsonl $o/sustained.jsonl > $o/ab.log 2>&1
kill $smi
step tests 200 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_verify_wgmma.py tests/test_api.py \
  tests/test_unified.py > $o/tests.log 2>&1
cat $o/times.txt; tail -n 3 $o/tests.log; grep -i "fail\|error\|Traceback" $o/ab.log | head -5
python3 results/v38/scripts/summary.py $o/ab.jsonl base
cat $o/sustained.jsonl
