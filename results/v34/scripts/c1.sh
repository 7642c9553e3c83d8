#!/usr/bin/env bash
# v34 call 1: (a) the keys-as-rows kernel's GPU tests through the late V wait (build/v34, make_variants.py) at
# extra_k 0 and 1, then a same-profile A/B against the library (late_v_ab.py); needs build/v34 carried.
# (b) v33's left-over wider tuner pass over the mixed batch's split short launches (16 candidates, from the two
# split profiles and their kv-major forms), then the mixed-batch bench with the table it leaves
. scripts/call-prologue.sh v34 c1
step tests0 90 env EXTRA_K=0 python3 -m pytest -q -n 8 -p no:cacheprovider -p late_v_patch tests/test_unified_keys_rows.py > $o/tests0.log 2>&1
step tests1 90 env EXTRA_K=1 python3 -m pytest -q -n 8 -p no:cacheprovider -p late_v_patch tests/test_unified_keys_rows.py > $o/tests1.log 2>&1
step ab 220 python3 results/v34/scripts/late_v_ab.py $o/ab.jsonl > $o/ab.log 2>&1
mkdir -p /tmp/tune
step tune 140 python3 -m pagedattn.cli tune --kernel unified --workload mixed-batch --max-candidates 16 --jobs 12 \
  --first-guess m16/n64/s8/w4/st3/ahead --first-guess m16/n128/s6/w4/st3/ahead \
  --first-guess m16/n64/s8/w4/st3/kvmajor/ahead --first-guess m16/n128/s6/w4/st3/kvmajor/ahead \
  --results /tmp/tune/tune-mixed.jsonl --report /tmp/tune/profiles-mixed.md > /tmp/tune/tune-mixed.log 2>&1
cp pagedattn/profiles/tables/NVIDIA_H200.json /tmp/tune/
tar czf $o/tune.tgz -C /tmp tune
step bench 80 python3 -m pagedattn.cli bench --workload mixed-batch --providers pagedattn pagedattn-default \
  --json $o/bench-mixed.json > $o/bench-mixed.log 2>&1
cat $o/times.txt; tail -2 $o/tests0.log $o/tests1.log; cut -c1-900 $o/ab.log | tail -8; tail -4 /tmp/tune/tune-mixed.log
grep -h "mixed\|68" /tmp/tune/profiles-mixed.md | cut -c1-300; tail -6 $o/bench-mixed.log
