#!/usr/bin/env bash
# v22 call 4: calls the keys-per-SM rule moves from the near bucket's keys-as-rows kernel to wgmma, both timed
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c4; mkdir -p $o
timeout 300 python3 build/v22/near_kernel_probe.py $o/near.jsonl boundary > $o/near.log 2>&1
echo "rc $?" >> $o/near.log
cut -c1-240 $o/near.log
tar czf $OUT/c4.tgz -C $OUT c4
