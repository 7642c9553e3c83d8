#!/usr/bin/env bash
# call 3: A/B of the change against HEAD's tree at the old table's profiles (twice), q=8 verify through each tree's rules
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c3; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
C=(--case mtp-verify "B=20 q=4 kv=32768 16q/1kv d256 bf16" --case mtp-verify "B=20 q=4 kv=32768 32q/2kv d256 bf16"
   --case mtp-verify "B=20 q=4 kv=32768 16q/1kv d256 fp8" --case mtp-verify "B=20 q=4 kv=70000 16q/1kv d256 fp8"
   --case long-request "B=1 q=1 kv=131072 16q/1kv d256 fp8")
for r in 1 2; do
  timeout 150 python3 scripts/compare_sources.py --old build/head --json $o/ab$r.json "${C[@]}" \
    --profile m64/n16/s12/w4/st4/ahead/wgmma --profile m16/n64/s256/w4/st2/keysrows > $o/ab$r.log 2>&1
  echo "ab$r rc $? $(el) s" >> $o/times.txt
done
timeout 200 python3 build/q8_ab.py $o/q8.jsonl build/head . > $o/q8.log 2>&1
echo "q8 rc $? $(el) s" >> $o/times.txt
cat $o/ab1.log | tail -20; tail -14 $o/ab2.log; cat $o/q8.jsonl; cat $o/times.txt
tar czf $OUT/c3.tgz -C $OUT c3
