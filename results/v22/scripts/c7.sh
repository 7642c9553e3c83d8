#!/usr/bin/env bash
# v22 call 7: the GPU suite on the final tree (after the dispatcher's lookup memo and to_dict change)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c7; mkdir -p $o
timeout 330 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/tests.log 2>&1
echo "rc $?" >> $o/tests.log
tail -3 $o/tests.log
