#!/usr/bin/env bash
# v41 call 5 (any sm90 GPU): the sparse kernels' GPU tests and tests/test_gpu.py after item 3's sm90 rule row
# (FP8 sparse decode now runs keys-as-rows where no profile is given)
. scripts/call-prologue.sh v41 c5
step tests 400 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_sparse.py tests/test_sparse_keys_rows.py \
  tests/test_sparse_exchange.py tests/test_gpu.py tests/test_api.py > $o/tests.log 2>&1
cat $o/times.txt; tail -n 3 $o/tests.log; grep -E "^(FAILED|ERROR)" $o/tests.log | head -20
