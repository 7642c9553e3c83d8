#!/usr/bin/env bash
# v30 call 3: both H200 tables re-tuned after the merge's change in ops/common.py (both kernels' hashes moved),
# then the unified bench on the new table and the table's own test
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c3; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
KERNELS="sparse unified" scripts/gpu-session.sh retune /tmp/retune > $o/retune.log 2>&1
echo "retune rc $? $(el) s" >> $o/times.txt
cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
tar czf $o/retune.tgz -C /tmp retune
timeout $(( 560 - $(el) )) python3 -m pagedattn.cli bench --workload mtp-verify long-request gqa-decode gqa-verify mixed-batch dense-prefill \
  --providers pagedattn --json $o/bench-unified-h200.json > $o/bench-unified-h200.log 2>&1
echo "bench unified rc $? $(el) s" >> $o/times.txt
timeout $(( 590 - $(el) )) python3 -m pytest -q -p no:cacheprovider tests/test_profiles.py > $o/profiles-tests.log 2>&1
echo "profiles tests rc $? $(el) s" >> $o/times.txt
cat $o/times.txt; tail -1 $o/profiles-tests.log
grep -h "tuned .* buckets\|kept\|moved" /tmp/retune/tune-*.log | tail -20
grep -E "^\| (mtp|long|gqa|mixed|dense|ceil)" $o/bench-unified-h200.log | cut -c1-200
