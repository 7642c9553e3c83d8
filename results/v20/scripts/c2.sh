#!/usr/bin/env bash
# call 2: RNG after a failed capture (probe + test), the sparse rescale tests that hit it in call 1,
# unified re-tune (3 passes), unified bench, kernel times
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c2; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
python3 -c "from pagedattn.profiles import tables; print(tables.kernel_hash('unified'), tables.kernel_hash('sparse'))" > $o/gpu.txt 2>&1
timeout 100 python3 build/rng_probe.py > $o/rng-probe.log 2>&1
echo "rng probe rc $? $(el) s" >> $o/times.txt
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_bench.py -k "cannot_be_captured" tests/test_sparse_exchange.py > $o/tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/times.txt
T="python3 -m pagedattn.cli tune --kernel unified --jobs 12 --quiet"
timeout 150 $T --workload mtp-verify long-request --results $o/tune-mtp.jsonl --report $o/profiles-mtp.md --max-candidates 8 \
  --first-guess m64/n128/s6/w8/st2/keysrows --first-guess m16/n128/s128/w8/st2/keysrows \
  --first-guess m16/n64/s256/w4/st2/keysrows --first-guess m64/n16/s13/w4/st5/ahead/wgmma \
  --first-guess m64/n16/s13/w4/st4/wgmma > $o/tune-mtp.log 2>&1
echo "tune mtp rc $? $(el) s" >> $o/times.txt
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/NVIDIA_H200.after-mtp.json
timeout 90 $T --workload gqa-verify gqa-decode mixed-batch dense-prefill --results $o/tune-rest.jsonl --report $o/profiles-rest.md --max-candidates 4 \
  > $o/tune-rest.log 2>&1
echo "tune rest rc $? $(el) s" >> $o/times.txt
timeout 60 $T --workload long-request --match "q=4 kv=131072 16q/1kv" --results $o/tune-long-q4.jsonl --report $o/profiles-long-q4.md --max-candidates 8 \
  --first-guess m64/n128/s128/w8/st2/keysrows --first-guess m64/n128/s132/w8/st2/keysrows > $o/tune-long-q4.log 2>&1
echo "tune long q4 rc $? $(el) s" >> $o/times.txt
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/NVIDIA_H200.json
timeout 150 python3 -m pagedattn.cli bench --workload mtp-verify long-request gqa-decode gqa-verify mixed-batch dense-prefill \
  --providers pagedattn pagedattn-default --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
echo "bench rc $? $(el) s" >> $o/times.txt
cat $o/rng-probe.log; tail -2 $o/tests.log; cat $o/times.txt
tar czf $OUT/c2.tgz -C $OUT c2
