#!/usr/bin/env bash
# v30 call 6: compute-sanitizer memcheck over the merge's tests (its L2 discards: every dropped line inside the
# partials) and the bad-index and several-block tests of the kernels whose splits it merges
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c6; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider \
  tests/test_merge.py > $o/memcheck-merge.log 2>&1
echo "memcheck merge rc $? $(el) s" >> $o/times.txt
timeout $(( 380 - $(el) )) compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider \
  tests/test_unified_keys_rows.py tests/test_unified.py tests/test_verify_wgmma.py \
  -k "invalid or several_blocks or every_page or padding or unknown_request" > $o/memcheck-kernels.log 2>&1
echo "memcheck kernels rc $? $(el) s" >> $o/times.txt
cat $o/times.txt; for f in $o/memcheck-*.log; do tail -1 $f; grep -E "passed|failed" $f | tail -1; done
