#!/usr/bin/env bash
# v27 call 1 (branch wip/unified-keys-rows-vote): the keys-as-rows kernels' GPU tests (stop if any fails), the
# A/B of the unified kernel's warp vote against main's file, the stamp probe, then, if the vote took less time
# (geometric mean of the A/B's ratios <= 0.995, every check passed), the unified table re-tuned
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c1; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 220 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_unified_keys_rows.py tests/test_sparse_exchange.py \
  tests/test_sparse_keys_rows.py > $o/tests.log 2>&1
rc=$?
echo "tests rc $rc $(el) s" >> $o/times.txt
if [ $rc -ne 0 ]; then tail -30 $o/tests.log; cat $o/times.txt; exit 1; fi
timeout 150 python3 results/v27/scripts/vote_ab.py $o/vote_ab.jsonl > $o/probe.log 2>&1
echo "ab rc $? $(el) s" >> $o/times.txt
timeout 90 python3 results/v27/scripts/stamp_probe.py $o/stamps.json >> $o/probe.log 2>&1
echo "stamps rc $? $(el) s" >> $o/times.txt
python3 - $o/vote_ab.jsonl >> $o/times.txt <<'PY'
import json, math, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
ok = len(rows) == 8 and all(r < 1e-2 and not nan for row in rows for r, nan in row["rel_l2_nan"].values())
ratios = [row["ms"][[k for k in row["ms"] if k.startswith("vote/")][0]] /
          row["ms"][[k for k in row["ms"] if k.startswith("main/")][0]] for row in rows]
gm = math.exp(sum(map(math.log, ratios)) / max(1, len(ratios)))
print("ratios", [round(r, 4) for r in ratios], "geomean", round(gm, 4), "checks", ok)
open("/tmp/retune", "w").write("yes" if ok and gm <= 0.995 else "no")
PY
if [ "$(cat /tmp/retune)" = yes ]; then
  KERNELS=unified timeout 400 scripts/gpu-session.sh retune $o/retune > $o/retune.log 2>&1
  echo "retune rc $? $(el) s" >> $o/times.txt
  cp pagedattn/profiles/tables/NVIDIA_H200.json $o/
fi
tail -2 $o/tests.log; cat $o/times.txt; cut -c1-600 $o/probe.log; grep -A12 "== profiles-" $o/retune.log 2>/dev/null | head -80
