#!/usr/bin/env bash
# v39 call 1: the wgmma probes' A/B (lazy_ab.py) with a power and clock log, then the GPU tests of the wgmma kernel
# through the lazy probe (lazy_patch.py); needs build/v39 carried (make_variants.py)
. scripts/call-prologue.sh v39 c1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 100 > $o/power.csv &
smi=$!
step ab 420 python3 results/v39/scripts/lazy_ab.py $o/ab.jsonl $o/sustained.jsonl > $o/ab.log 2>&1
kill $smi
step tests 150 python3 -m pytest -q -n 8 -p no:cacheprovider -p lazy_patch tests/test_verify_wgmma.py > $o/tests.log 2>&1
cat $o/times.txt; tail -n 2 $o/tests.log; grep -i "fail\|error\|Traceback" $o/ab.log | head -5
python3 results/v38/scripts/summary.py $o/ab.jsonl base
cat $o/sustained.jsonl
