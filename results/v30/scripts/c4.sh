#!/usr/bin/env bash
# v30 call 4: the library merge against other whole-line launch shapes (merge_discard_ab.py --shapes), on the
# re-tuned table
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c4; mkdir -p $o
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/times.txt
timeout 300 python3 results/v30/scripts/merge_discard_ab.py $o/shapes.jsonl --shapes > $o/shapes.log 2>&1
echo "shapes rc $? $(el) s" >> $o/times.txt
cat $o/times.txt
python3 - $o/shapes.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    base = r["ms_min"]["library"]
    print(r["case"], r["profile"], round(base * 1e3, 2), "us", {v: round(t / base, 4) for v, t in r["ms_min"].items()},
          "bad" if any(c[1] or c[0] >= 1e-2 for c in r["rel_l2_nan"].values()) else "ok")
PY
