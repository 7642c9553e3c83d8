#!/usr/bin/env bash
# v31 call 7: the split merge kernel under ncu's details (speed of light, launch, occupancy, warp states, memory
# workload) on the FP8 long request (q=1, q=4) and BF16 MTP at 32,768 keys, partials left in L2 (--cache-control none)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c7; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 300 ncu --clock-control none --cache-control none --kernel-name regex:merge --csv --page details \
  --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
  --section MemoryWorkloadAnalysis --section SchedulerStats \
  python3 results/v31/scripts/merge_ncu.py > $o/ncu.csv 2> $o/ncu.err
echo "ncu rc $? $(el) s" >> $o/times.txt
cat $o/times.txt; tail -3 $o/ncu.err; grep -c "merge_splits_kernel" $o/ncu.csv
grep -E '"(Duration|Elapsed Cycles|Achieved Occupancy|Warp Cycles Per Issued Instruction|L2 Hit Rate|Memory Throughput|Stall Long Scoreboard)"' $o/ncu.csv | head -30 | cut -c1-220
