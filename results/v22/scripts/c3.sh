#!/usr/bin/env bash
# v22 call 3: near-bucket calls whose bucket profile and rules differ in kernel or in splitting
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c3; mkdir -p $o
timeout 400 python3 build/v22/near_kernel_probe.py $o/near.jsonl > $o/near.log 2>&1
echo "rc $?" >> $o/near.log
cut -c1-260 $o/near.log
tar czf $OUT/c3.tgz -C $OUT c3
