#!/usr/bin/env bash
# v21 call 7: the whole GPU suite on the final tree (near-bucket split scaling in select)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c7; mkdir -p $o
timeout 330 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/gpu-tests.log 2>&1
echo "tests rc $?" >> $o/gpu-tests.log
tail -3 $o/gpu-tests.log
