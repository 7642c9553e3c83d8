#!/usr/bin/env bash
# v24 call 5: compute-sanitizer memcheck over the bad-index tests (now with FP8 pages on the Triton
# kernels, which take them as bytes since v24), then the sparse-decode bench rows call 4 did not reach
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c5; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider \
  tests/test_unified.py tests/test_sparse.py tests/test_verify_wgmma.py -k "invalid or every_page or padding or unknown_request" \
  > $o/memcheck.log 2>&1
echo "memcheck rc $? $(el) s" >> $o/times.txt
timeout 90 python3 -m pagedattn.cli bench --workload sparse-decode --providers pagedattn pagedattn-default \
  --json $o/bench-sparse-decode-h200.json > $o/bench-sparse-decode-h200.log 2>&1
echo "bench rc $? $(el) s" >> $o/times.txt
grep -E "ERROR SUMMARY|passed|failed" $o/memcheck.log | tail -2; tail -12 $o/bench-sparse-decode-h200.log; cat $o/times.txt
