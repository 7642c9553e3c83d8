#!/usr/bin/env bash
# v21 call 4: clocks, power and power-cap events while each headline kernel runs for 4 s back to back
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c4; mkdir -p $o
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 50 > $o/smi.csv 2>&1 &
SMI=$!
nvidia-smi -q -d POWER > $o/power.txt 2>&1
timeout 150 python3 build/v21/clock_probe.py $o/clock.jsonl > $o/clock.log 2>&1
echo "rc $?" >> $o/clock.log
kill $SMI
cat $o/clock.log
tar czf $OUT/c4.tgz -C $OUT c4
