#!/usr/bin/env bash
# v24 call 2: the sparse re-tune (v18's pass) after call 1's unified one, then the whole GPU suite on
# the final sources and table, and the serving check
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c2; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/gpu.txt
timeout 190 python3 -m pagedattn.cli tune --kernel sparse --jobs 12 --quiet --max-candidates 8 \
  --first-guess m16/n32/s1/w2/st2/exchange --first-guess m16/n16/s1/w2/st2/exchange \
  --first-guess m16/n64/s1/w4/st2/keysrows --results $o/tune-sparse.jsonl --report $o/profiles-sparse.md > $o/tune-sparse.log 2>&1
echo "tune sparse rc $? $(el) s" >> $o/times.txt
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/NVIDIA_H200.json
python3 -c "from pagedattn.profiles import tables; print(tables.kernel_hash('unified'), tables.kernel_hash('sparse'))" >> $o/gpu.txt 2>&1
timeout 300 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/times.txt
timeout 60 python3 scripts/check_serving_shapes.py > $o/serving-shapes.log 2>&1
echo "serving rc $? $(el) s" >> $o/times.txt
tail -3 $o/tests.log; tail -4 $o/serving-shapes.log; cat $o/gpu.txt $o/times.txt
tar czf $OUT/c2-logs.tgz -C $o tune-sparse.jsonl tune-sparse.log && rm $o/tune-sparse.jsonl $o/tune-sparse.log
