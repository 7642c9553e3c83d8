#!/usr/bin/env bash
# v39 call 2, by the GPU that comes: on an H200, call 1 again (the lazy probe's A/B with power and clock log; call 1
# got an H100); on an H100, the first H100 table of the unified kernels: `pagedattn tune` from no table (the sm90
# rules, written from the H200 table, are its start) with the passes and first guesses of
# `scripts/gpu-session.sh retune` (not the mixed batches: a short call), then the bench of MTP verify, the long
# request and GQA decode with the table and without it
. scripts/call-prologue.sh v39 c2
if grep -q H200 $o/times.txt; then
  exec bash results/v39/scripts/c1.sh  # writes under $OUT/c1
fi
r=/tmp/tune; mkdir -p $r
tune() {  # tune NAME SECONDS ARGS...: one pass, its own results file and report; interrupted (SIGINT: it writes
  local name=$1 secs=$2; shift 2  # the buckets it finished) after SECONDS
  step "tune-$name" $((secs + 15)) timeout -s INT $secs python3 -m pagedattn.cli tune --kernel unified --jobs 12 --quiet \
    --results $r/tune-$name.jsonl --report $r/profiles-$name.md "$@" > $r/tune-$name.log 2>&1
}
tune mtp 130 --workload mtp-verify long-request --max-candidates 8 \
  --first-guess m64/n128/s6/w8/st2/keysrows --first-guess m16/n128/s128/w8/st2/keysrows \
  --first-guess m16/n64/s256/w4/st2/keysrows --first-guess m64/n16/s13/w4/st5/ahead/wgmma \
  --first-guess m64/n16/s13/w4/st4/wgmma
tune rest 40 --workload gqa-verify gqa-decode dense-prefill --max-candidates 4
cp pagedattn/profiles/tables/NVIDIA_H100_80GB_HBM3.json $o/
tar czf $o/tune.tgz -C $r .
step bench $(( 300 - ($(date +%s) - t0) )) python3 -m pagedattn.cli bench --workload mtp-verify long-request \
  gqa-decode --providers pagedattn pagedattn-default \
  --json $o/bench-unified-h100.json > $o/bench-unified-h100.log 2>&1
cat $o/times.txt; for f in $r/tune-*.log; do echo "== $f"; tail -3 "$f"; done
grep -A3 "^Ceilings" $o/bench-unified-h100.log | head -4
grep -E "^(mtp|long|gqa|mixed|dense)" $o/bench-unified-h100.log | cut -c1-160
