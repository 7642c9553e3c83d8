#!/usr/bin/env bash
# v30 call 1: the merge's partial lines dropped from L2 after reading (discard.global.L2): the merge tests,
# a same-profile A/B with power for the two MTP cases at 32,768 keys, then HBM bytes per kernel under ncu
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c1; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
git log --oneline -1 >> $o/times.txt
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_merge.py > $o/merge-tests.log 2>&1
echo "merge tests rc $? $(el) s" >> $o/times.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader -lms 100 > $o/clocks.csv 2>&1 &
timeout 330 python3 results/v30/scripts/merge_discard_ab.py $o/ab.jsonl --power > $o/ab.log 2>&1
echo "ab rc $? $(el) s" >> $o/times.txt
kill %1
timeout $(( 580 - $(el) )) ncu --clock-control none --cache-control none --csv \
  --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum --kernel-name regex:'verify|keys_rows|merge' \
  python3 results/v30/scripts/merge_discard_ncu.py > $o/ncu.csv 2> $o/ncu.err
echo "ncu rc $? $(el) s" >> $o/times.txt
cat $o/times.txt; tail -2 $o/merge-tests.log; cut -c1-400 $o/ab.log | grep -v '"variant"' | tail -12; tail -3 $o/ncu.err
