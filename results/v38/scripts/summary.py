"""Print an A/B results file (ab_probe.time_unified_case's JSON lines) one case a line: each variant's min time in us,
its ratio to the BASELINE variant, the largest rel-L2 and whether any output stayed NaN.
Usage: summary.py AB.jsonl BASELINE"""
import json
import sys

for line in open(sys.argv[1]):
    row = json.loads(line)
    base = row["ms"][sys.argv[2]]
    errors = [err for err, _ in row["rel_l2_nan"].values()]
    nan = any(n for _, n in row["rel_l2_nan"].values())
    print(row["case"][:44], {k: round(v * 1e3, 2) for k, v in row["ms"].items()},
          {k: round(v / base, 3) for k, v in row["ms"].items()}, "max rel-L2 %.1e" % max(errors), "NAN" if nan else "")
