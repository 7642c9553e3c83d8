#!/bin/bash
# v21 call 1: profile exploration for the single long request (no code change), kernel breakdowns
export PYTHONPATH=.
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv | tee $OUT/c1-gpu.txt
Q1="long-request:q=1 kv=131072 16q/1kv"
Q4="long-request:q=4 kv=131072 16q/1kv"
P1="m16/n64/s256/w4/st3/keysrows m16/n64/s264/w4/st2/keysrows m16/n64/s264/w4/st3/keysrows m16/n64/s396/w4/st2/keysrows m16/n64/s330/w4/st2/keysrows m16/n64/s192/w4/st3/keysrows m16/n128/s132/w8/st3/keysrows m16/n64/s132/w4/st6/keysrows m16/n64/s132/w4/st4/keysrows"
P4="m32/n64/s128/w4/st2/keysrows m32/n64/s66/w4/st3/keysrows m32/n128/s66/w8/st3/keysrows m32/n128/s66/w8/st2/keysrows m16/n64/s64/w4/st2/keysrows m16/n64/s99/w4/st2/keysrows m64/n128/s132/w8/st2/keysrows"
for p in $P1; do python3 build/v21/warm.py "$Q1" $p > $OUT/warm-$(echo $p | tr / _).log 2>&1 & done
for p in $P4; do python3 build/v21/warm.py "$Q4" $p > $OUT/warm4-$(echo $p | tr / _).log 2>&1 & done
wait
echo "warm done $(( $(date +%s) - T0 )) s" | tee -a $OUT/c1-times.txt
A1=""; for p in $P1; do A1="$A1 --profile $p"; done
A4=""; for p in $P4; do A4="$A4 --profile $p"; done
python3 scripts/kernel_times.py $OUT/c1-kt-q1.json "$Q1" $A1 --stream-read > $OUT/c1-kt-q1.log 2>&1
echo "q1 done $(( $(date +%s) - T0 )) s" | tee -a $OUT/c1-times.txt
python3 scripts/kernel_times.py $OUT/c1-kt-q4.json "$Q4" $A4 > $OUT/c1-kt-q4.log 2>&1
echo "q4 done $(( $(date +%s) - T0 )) s" | tee -a $OUT/c1-times.txt
python3 scripts/kernel_times.py $OUT/c1-kt-mtp.json "mtp-verify:kv=32768 16q/1kv" --stream-read > $OUT/c1-kt-mtp.log 2>&1
echo "mtp done $(( $(date +%s) - T0 )) s" | tee -a $OUT/c1-times.txt
python3 -m pagedattn.cli bench --workload long-request mtp-verify --providers pagedattn --json $OUT/c1-bench.json > $OUT/c1-bench.log 2>&1
echo "bench done $(( $(date +%s) - T0 )) s" | tee -a $OUT/c1-times.txt
cd $OUT && tar czf c1.tgz *.log *.json *.txt
