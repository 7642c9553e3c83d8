#!/usr/bin/env bash
# v44 call 10 (from the tree with item 6; its one try got an H100 and stopped), only on an H200 (on any other GPU it stops after writing the GPU's name), in the ~370 s of device time
# the session had left after two failed starts: item 6 moved the unified kernels' hash, so every unified bucket of the
# H200 table is measured again on the new sources at its two starting points (the previous table's profile and the
# no-table profile, `--max-candidates 2`: a re-measure, not the full re-tune of scripts/gpu-session.sh retune), then
# the GPU tests of the keys-as-rows kernel and the profile layer, then the bench of MTP verify and the long requests.
. scripts/call-prologue.sh v44 c10
if ! grep -q H200 $o/times.txt; then cat $o/times.txt; exit 0; fi
step remeasure 150 timeout -s INT 140 python3 -m pagedattn.cli tune --kernel unified --max-candidates 2 --jobs 12 \
  --quiet --results $o/remeasure.jsonl --report $o/profiles-remeasure.md > $o/remeasure.log 2>&1
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
step tests 60 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_unified_keys_rows.py tests/test_profiles.py \
  > $o/tests.log 2>&1
step bench 70 python3 -m pagedattn.cli bench --workload mtp-verify long-request --providers pagedattn \
  --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
cat $o/times.txt; tail -n 3 $o/remeasure.log; tail -n 2 $o/tests.log
grep -A1 "^Ceilings" $o/bench-unified-h200.log | head -2
grep -E "^(mtp|long)" $o/bench-unified-h200.log | cut -c1-150
