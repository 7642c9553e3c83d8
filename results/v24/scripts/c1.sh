#!/usr/bin/env bash
# v24 call 1: the Triton kernels' FP8 pages as bytes and the sm100 rescale test (ops/common.py,
# ops/unified.py, ops/sparse.py: both hashes change; offline sm90 SASS identical on 10 of 11 forms):
# their GPU tests, then the unified re-tune with v21's four passes
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c1; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
python3 -c "from pagedattn.profiles import tables; print(tables.kernel_hash('unified'), tables.kernel_hash('sparse'))" > $o/gpu.txt 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv >> $o/gpu.txt
timeout 110 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_unified.py tests/test_sparse.py > $o/tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/times.txt
T="python3 -m pagedattn.cli tune --kernel unified --jobs 12 --quiet"
timeout 170 $T --workload mtp-verify long-request --results $o/tune-mtp.jsonl --report $o/profiles-mtp.md --max-candidates 8 \
  --first-guess m64/n128/s6/w8/st2/keysrows --first-guess m16/n128/s128/w8/st2/keysrows \
  --first-guess m16/n64/s256/w4/st2/keysrows --first-guess m64/n16/s13/w4/st5/ahead/wgmma \
  --first-guess m64/n16/s13/w4/st4/wgmma > $o/tune-mtp.log 2>&1
echo "tune mtp rc $? $(el) s" >> $o/times.txt
timeout 90 $T --workload gqa-verify gqa-decode mixed-batch dense-prefill --results $o/tune-rest.jsonl --report $o/profiles-rest.md --max-candidates 4 \
  > $o/tune-rest.log 2>&1
echo "tune rest rc $? $(el) s" >> $o/times.txt
timeout 60 $T --workload long-request --match "q=4 kv=131072 16q/1kv" --results $o/tune-long-q4.jsonl --report $o/profiles-long-q4.md --max-candidates 8 \
  --first-guess m64/n128/s128/w8/st2/keysrows --first-guess m64/n128/s132/w8/st2/keysrows > $o/tune-long-q4.log 2>&1
echo "tune long q4 rc $? $(el) s" >> $o/times.txt
timeout 60 $T --workload mtp-verify --match "kv=32768 16q/1kv d256 bf16" --first-guess m64/n16/s13/w4/st5/ahead/wgmma \
  --max-candidates 8 --min-gain 0.01 --results $o/tune-bf16.jsonl --report $o/profiles-bf16.md > $o/tune-bf16.log 2>&1
echo "tune bf16 rc $? $(el) s" >> $o/times.txt
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/NVIDIA_H200.json
tail -2 $o/tests.log; cat $o/gpu.txt $o/times.txt
