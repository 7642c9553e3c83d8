#!/usr/bin/env bash
# v23 call 2: host time per eager call, remembered selection against v22's path; where the rest goes
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c2; mkdir -p $o
nproc > $o/host.txt; python3 -c "import platform; print(platform.processor(), platform.python_version())" >> $o/host.txt
timeout 200 python3 build/v23/dispatch_time.py $o/dispatch.json > $o/dispatch.log 2>&1
echo "rc $?" >> $o/dispatch.log
cut -c1-400 $o/dispatch.log
