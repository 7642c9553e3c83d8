#!/usr/bin/env bash
# v44 call 7 (any sm90 GPU): the prologue candidates' A/B (fill_ab.py: vw_fill on BF16 MTP verify, ukr_qbar on the FP8
# long requests and FP8 MTP verify) against the library's kernels; needs build/v44 carried.
. scripts/call-prologue.sh v44 c7
step ab 420 python3 results/v44/scripts/fill_ab.py $o/ab.jsonl > $o/ab.log 2>&1
cat $o/times.txt; grep -i "fail\|error\|Traceback" -A5 $o/ab.log | head -20
python3 - $o/ab.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    row = json.loads(line)
    base, probe = row["ms"]
    print(row["case"][:40], {k: round(v * 1e3, 2) for k, v in row["ms"].items()}, round(row["ms"][probe] / row["ms"][base], 4),
          "rel-L2 %.1e" % max(e for e, _ in row["rel_l2_nan"].values()), "NAN" if any(n for _, n in row["rel_l2_nan"].values()) else "")
PY
