#!/usr/bin/env bash
# v28 call 6: the whole GPU suite on the final tree (its library kernels are main's; the tests add
# NaN bit patterns past each sequence's length for both Gluon unified kernels, `conftest.poison_past_lengths`),
# then whether that poison fails a kernel that copies whole pages without zeroing (results/v28/scripts/poison_check.py)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c6; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 480 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/gpu-tests.log 2>&1
echo "gpu tests rc $? $(el) s" >> $o/times.txt
timeout 60 python3 results/v28/scripts/poison_check.py > $o/poison.log 2>&1
echo "poison check rc $? $(el) s" >> $o/times.txt
tail -3 $o/gpu-tests.log; cat $o/times.txt $o/poison.log
