#!/usr/bin/env bash
# v25 call 3: the final kernels (sparse exchange: K without the byte permute, the copies' wide products, the
# growth's reduction order; helpers moved to ops/gluon_common.py; caches the Gluon kernels cannot copy whole
# refused): the changed kernels' GPU tests, memcheck over the bad-index tests, then both re-tunes (both hashes
# change): sparse (v18's pass), unified (v21's four passes)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c3; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
python3 -c "from pagedattn.profiles import tables; print(tables.kernel_hash('unified'), tables.kernel_hash('sparse'))" > $o/gpu.txt 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv >> $o/gpu.txt
timeout 120 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_sparse_exchange.py tests/test_sparse_keys_rows.py \
  tests/test_verify_wgmma.py tests/test_unified_keys_rows.py tests/test_api.py > $o/tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/times.txt
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider tests/test_unified.py \
  tests/test_sparse.py tests/test_verify_wgmma.py tests/test_sparse_exchange.py tests/test_sparse_keys_rows.py \
  -k "invalid or every_page or padding or unknown_request or masks" > $o/memcheck.log 2>&1
echo "memcheck rc $? $(el) s" >> $o/times.txt
timeout 190 python3 -m pagedattn.cli tune --kernel sparse --jobs 12 --quiet --max-candidates 8 \
  --first-guess m16/n32/s1/w2/st2/exchange --first-guess m16/n16/s1/w2/st2/exchange \
  --first-guess m16/n64/s1/w4/st2/keysrows --results $o/tune-sparse.jsonl --report $o/profiles-sparse.md > $o/tune-sparse.log 2>&1
echo "tune sparse rc $? $(el) s" >> $o/times.txt
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
tail -2 $o/tests.log; tail -2 $o/memcheck.log; cat $o/gpu.txt $o/times.txt
tar czf $OUT/c3-tune.tgz -C $o $(cd $o && ls tune-*.jsonl tune-*.log) && (cd $o && rm tune-*.jsonl tune-*.log)
