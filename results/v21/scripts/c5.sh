#!/usr/bin/env bash
# v21 call 5: memcheck over both Gluon unified kernels' invalid-page and several-block tests on the final tree
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c5; mkdir -p $o
python3 -c "from pagedattn.profiles import tables; print(tables.kernel_hash('unified'), tables.kernel_hash('sparse'))" > $o/gpu.txt 2>&1
timeout 400 compute-sanitizer --tool memcheck --error-exitcode 1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_unified_keys_rows.py tests/test_verify_wgmma.py -k "invalid_pages or several_blocks" > $o/memcheck.log 2>&1
echo "memcheck rc $?" >> $o/memcheck.log
tail -4 $o/memcheck.log; cat $o/gpu.txt
