#!/usr/bin/env bash
# v54 call 1, from branch wip/packed-q-terms (main with results/v52/packed-q-terms.patch applied) with build/v51
# carried (results/v51/scripts/make_variants.py run on the branch). On an H200: v52's c1.sh (the A/B at the FP8 long
# request q=1, then `land_unified` in LIMIT seconds, default 480). On another GPU (an H100 comes for the nvidia-h200
# kind at times): the same A/B and the GPU tests of the keys-as-rows kernel and the API on the branch's build (its
# 16-row packed form has not run the GPU tests yet: v51's call 1 tested the packed-everywhere form), in TESTS_S seconds.
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then exec bash results/v52/scripts/c1.sh; fi
. scripts/call-prologue.sh v54 c1
export PYTHONPATH=$PYTHONPATH:$PWD/build/v51
step ab 90 python3 results/v51/scripts/packed_ab.py $o/ab.jsonl "B=1 q=1 kv=131072 16q/1kv d256 fp8" > $o/ab.log 2>&1
grep -i "error\|Traceback" -A5 $o/ab.log | head -20; python3 results/v38/scripts/summary.py $o/ab.jsonl ukr_base
step tests ${TESTS_S:-150} python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified_keys_rows.py tests/test_api.py \
  > $o/tests.log 2>&1
cat $o/times.txt; tail -n 2 $o/tests.log
