#!/usr/bin/env bash
# v30 call 2: the whole GPU suite on the library merge (merge_shape, whole-line slices, L2 discard), then its
# same-profile A/B against v29's merge and its own shape without the discard, with power at 32,768 keys
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c2; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 330 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/gpu-tests.log 2>&1
echo "gpu tests rc $? $(el) s" >> $o/times.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader -lms 100 > $o/clocks.csv 2>&1 &
timeout $(( 585 - $(el) )) python3 results/v30/scripts/merge_discard_ab.py $o/ab.jsonl --library --power > $o/ab.log 2>&1
echo "ab rc $? $(el) s" >> $o/times.txt
kill %1
cat $o/times.txt; tail -2 $o/gpu-tests.log; grep -E "FAILED|ERROR" $o/gpu-tests.log | head -20
python3 - $o/ab.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "ms_min" in r:
        base = r["ms_min"]["v29"]
        print(r["case"], r["profile"], {v: round(t / base, 4) for v, t in r["ms_min"].items()}, round(base * 1e3, 2),
              "us", {v: round(c[0], 5) for v, c in r["rel_l2_nan"].items()}, any(c[1] for c in r["rel_l2_nan"].values()))
    else:
        print(r["case"], r["variant"], round(r["ms_sustained"] * 1e3, 2), "us sustained")
PY
