#!/usr/bin/env bash
# v27 call 2: the unified keys-as-rows kernel's epilogue storing O^T's halves straight from the wgmma registers
# (the tree) against call 1's vote file (build/v27/ukr_vote.py): its GPU tests (stop if any fails), the A/B,
# the stamp probe of both, then the sparse table re-tuned (the vote's move into gluon_common staled it; the
# epilogue change leaves the sparse files alone)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c2; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_unified_keys_rows.py > $o/tests.log 2>&1
rc=$?
echo "tests rc $rc $(el) s" >> $o/times.txt
if [ $rc -ne 0 ]; then tail -30 $o/tests.log; cat $o/times.txt; exit 1; fi
timeout 150 python3 results/v27/scripts/vote_ab.py $o/direct_ab.jsonl ukr_vote vote direct > $o/probe.log 2>&1
echo "ab rc $? $(el) s" >> $o/times.txt
timeout 120 python3 results/v27/scripts/stamp_probe.py $o/stamps.json >> $o/probe.log 2>&1
echo "stamps rc $? $(el) s" >> $o/times.txt
KERNELS=sparse timeout 240 scripts/gpu-session.sh retune $o/retune > $o/retune.log 2>&1
echo "retune rc $? $(el) s" >> $o/times.txt
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
tail -2 $o/tests.log; cat $o/times.txt; cut -c1-900 $o/probe.log; grep -B2 -A3 "tuned .* buckets" $o/retune.log
