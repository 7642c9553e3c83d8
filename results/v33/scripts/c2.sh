#!/usr/bin/env bash
# v33 call 2: the split short launch's merge (ops/common.py) moved both kernels' hashes: both H200 tables re-tuned
# (scripts/gpu-session.sh retune, its unified passes now with a mixed-batch pass from call 1's split short profiles)
. scripts/call-prologue.sh v33 c2
export KERNELS="sparse unified"
step retune 585 scripts/gpu-session.sh retune /tmp/retune > $o/retune.log 2>&1
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
tar czf $o/retune.tgz -C /tmp retune
mkdir -p /tmp/r && tar xzf /tmp/retune/session.tgz -C /tmp/r
cat $o/times.txt; for f in /tmp/r/tune-*.log; do echo "== $f"; tail -3 "$f"; done
grep -h "mixed" /tmp/r/profiles-mixed.md | cut -c1-300
