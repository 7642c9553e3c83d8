#!/usr/bin/env bash
# v21 call 6: calls near a tuned bucket, the table's split count as tuned against the one scaled to the call's programs
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c6; mkdir -p $o
timeout 420 python3 build/v21/near_bucket_probe.py $o/near.jsonl > $o/near.log 2>&1
echo "rc $?" >> $o/near.log
tail -3 $o/near.log
