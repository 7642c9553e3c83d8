#!/usr/bin/env bash
# v42 call 7 (any sm90 GPU): ncu's full set over the unified keys-as-rows kernel (ncu_keys_rows.py), the details page
# and the raw metrics (gzipped), then the rows that say where a step's time goes
. scripts/call-prologue.sh v42 c4
NCU="ncu --profile-from-start off --clock-control none --kernel-name regex:unified_keys_rows --set full --csv"
step details 220 $NCU --page details python3 results/v42/scripts/ncu_keys_rows.py > $o/ncu-details.csv 2> $o/ncu-details.err
step raw 220 $NCU --page raw python3 results/v42/scripts/ncu_keys_rows.py > $o/ncu-raw.csv 2> $o/ncu-raw.err
gzip -f $o/ncu-raw.csv
cat $o/times.txt; tail -4 $o/ncu-details.err
grep -E '"(Duration|SM Frequency|DRAM Throughput|Compute \(SM\) Throughput|Executed Ipc Active|Issue Slots Busy|Registers Per Thread|Achieved Occupancy|Warp Cycles Per Issued Instruction|No Eligible|L1/TEX Hit Rate|Shared Memory Configuration Size)"' \
  $o/ncu-details.csv | cut -c1-200
zcat $o/ncu-raw.csv.gz | python3 -c "
import csv, sys
rows = list(csv.reader(sys.stdin))
head, units, data = rows[0], rows[1], rows[2:]
keys = [i for i, h in enumerate(head) if any(s in h for s in ('pipe_tensor', 'pipe_shared', 'mem_shared', 'smsp__average_warp', 'warp_issue_stalled', 'inst_executed.avg.per_cycle'))]
for r in data:
    print('==', r[head.index('Kernel Name')][:40] if 'Kernel Name' in head else '', r[head.index('gpu__time_duration.sum')] if 'gpu__time_duration.sum' in head else '')
    for i in keys:
        if 'pct' in head[i] or 'ratio' in head[i] or 'per_cycle' in head[i]:
            print('  ', head[i], r[i], units[i])
" 2>&1 | head -150
