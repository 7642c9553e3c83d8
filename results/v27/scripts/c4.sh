#!/usr/bin/env bash
# v27 call 4: the final tree and call 3's tables: memcheck over the unified keys-as-rows kernel's invalid-page and
# several-block tests (the direct stores' addressing), then the whole GPU suite
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c4; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 170 compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider \
  tests/test_unified_keys_rows.py -k "invalid_pages or several_blocks" > $o/memcheck.log 2>&1
echo "memcheck rc $? $(el) s" >> $o/times.txt
timeout $(( 575 - $(el) )) python3 -m pytest -q -p no:cacheprovider -n 8 > $o/gpu-tests.log 2>&1
echo "gpu tests rc $? $(el) s" >> $o/times.txt
tail -3 $o/memcheck.log; grep -c "ERROR SUMMARY: 0 errors" $o/memcheck.log; grep "ERROR SUMMARY" $o/memcheck.log | sort | uniq -c
tail -3 $o/gpu-tests.log; grep -E "^FAILED|^ERROR" $o/gpu-tests.log | head -20; cat $o/times.txt
