#!/usr/bin/env bash
# v50 call 8 (outputs in c2), on the H200 that call 7 (`results/v45/scripts/c1.sh`) got, with its re-tuned NVIDIA_H200.json in
# pagedattn/profiles/tables: the MTP verify and long-request bench twice more, for the medians of the two rows at
# the 60 % / 80 % lines (the FP8 long request at q=1, BF16 MTP 16q/1kv at 32,768 keys).
mkdir -p $OUT/c2; nvidia-smi --query-gpu=name --format=csv,noheader
for i in 1 2; do
  python3 -m pagedattn.cli bench --workload mtp-verify long-request --providers pagedattn pagedattn-default \
    --json $OUT/c2/bench-$i.json > $OUT/c2/bench-$i.log 2>&1; echo rc $?
  grep -A1 "^Ceilings" $OUT/c2/bench-$i.log | tail -1
  grep -E "kv=32768 16q/1kv d256 bf1|kv=131072 16q/1kv" $OUT/c2/bench-$i.log | cut -c1-120
done
