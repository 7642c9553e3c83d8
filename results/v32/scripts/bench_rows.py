"""v32: the rows of docs/benchmarks.md's v32 unified table from a bench JSON (`pagedattn bench --json`), the
`pagedattn` row of each case with the `pagedattn-default` row's time and source beside it; since v33 also its
sparse tables' rows, with each case's gather ceiling and share of it.
Usage: bench_rows.py BENCH.json"""
import json
import sys

report = json.load(open(sys.argv[1]))
rows = report["results"]
for row in rows:
    if row["provider"] != "pagedattn":
        continue
    other = next(r for r in rows if r["case"] == row["case"] and r["provider"] == "pagedattn-default")
    profile = row["profile"]
    gather = f"{row['gather_ceiling_tbps']:.2f} | {row['pct_gather']:.0f} % | " if "gather_ceiling_tbps" in row else ""
    print(f"| {row['workload']} | {row['case']} | {row['time_ms']:.4g} | {row['tbps']:.2f} | {row['pct_hbm']:.0f} % | "
          f"{gather}{row['tflops']:.0f} | `{profile['short']}` ({profile['source']}) | {other['time_ms']:.4g} "
          f"({other['profile']['source'].replace(' (no table)', '')}) | {other['time_ms'] / row['time_ms']:.2f}x | "
          f"{row['rel_l2']:.1e} |")
