#!/usr/bin/env bash
# v22 call 1: the pair-softmax wgmma kernel: its GPU tests, then the A/B against v21's loop with SM clocks
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c1; mkdir -p $o
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_verify_wgmma.py > $o/tests.log 2>&1
echo "rc $?" >> $o/tests.log
tail -5 $o/tests.log
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 50 > $o/smi.csv 2>&1 &
SMI=$!
timeout 330 python3 build/v22/pair_ab.py $o/ab.jsonl 3 > $o/ab.log 2>&1
echo "rc $?" >> $o/ab.log
kill $SMI
cat $o/ab.log | cut -c1-400
tar czf $OUT/c1.tgz -C $OUT c1
