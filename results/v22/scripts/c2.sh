#!/usr/bin/env bash
# v22 call 2: the two-consumer warp-specialized wgmma prototype against the library kernel (BF16 MTP), SM clocks
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c2; mkdir -p $o
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 50 > $o/smi.csv 2>&1 &
SMI=$!
timeout 400 python3 build/v22/ws_ab.py $o/ws.jsonl > $o/ws.log 2>&1
echo "rc $?" >> $o/ws.log
kill $SMI
cut -c1-330 $o/ws.log
tar czf $OUT/c2.tgz -C $OUT c2
