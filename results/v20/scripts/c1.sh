#!/usr/bin/env bash
# call 1: GPU suite, memcheck over the invalid-page tests, kernel-choice probe (q=8 rows)
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c1; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv;
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)";
  python3 -c "from pagedattn.profiles import tables; print(tables.kernel_hash('unified'), tables.kernel_hash('sparse'))"; } > $o/gpu.txt 2>&1
timeout 280 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/gpu-tests.log 2>&1
echo "tests rc $? $(el) s" >> $o/times.txt
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_unified_keys_rows.py tests/test_verify_wgmma.py -k invalid_pages > $o/memcheck.log 2>&1
echo "memcheck rc $? $(el) s" >> $o/times.txt
timeout 170 python3 scripts/unified_kernel_choice_probe.py $o/kernel-choice.jsonl > $o/kernel-choice.log 2>&1
echo "probe rc $? $(el) s" >> $o/times.txt
tail -3 $o/gpu-tests.log; tail -2 $o/memcheck.log; cat $o/times.txt
tar czf $OUT/c1.tgz -C $OUT c1
