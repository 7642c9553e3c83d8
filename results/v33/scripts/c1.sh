#!/usr/bin/env bash
# v33 call 1: the short launch split (partials and merge by sequence, perf-notes v33 item 1) on the GPU before any
# re-tune: its GPU tests (the shipped table's hash test is expected to fail: the kernel moved), then the A/B of the
# short launch's split counts alone and in the whole mixed call, and an empty split short launch
# (short_split_ab.py)
. scripts/call-prologue.sh v33 c1
step tests 150 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified.py tests/test_merge.py \
  tests/test_profiles.py tests/test_api.py > $o/tests.log 2>&1
step ab 300 python3 results/v33/scripts/short_split_ab.py $o/short-split-ab.jsonl > $o/short-split-ab.log 2>&1
cat $o/times.txt; tail -4 $o/tests.log; cut -c1-3000 $o/short-split-ab.log
