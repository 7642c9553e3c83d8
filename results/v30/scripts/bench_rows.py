"""v30: the rows of docs/benchmarks.md's unified and sparse tables, rendered from a bench report (providers
pagedattn and pagedattn-default) and v7's torch-sdpa report of the same kernel, in the report's case order.
Usage: bench_rows.py BENCH.json SDPA.json"""
import json, sys


def g(x: float) -> str:
    """4 significant digits, as the tables write times."""
    return f"{x:.4g}" if x >= 1e-3 else f"{x:.3g}"


report, sdpa = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sdpa_ms = {r["case"]: r["time_ms"] for r in sdpa["results"] if r["provider"] == "torch-sdpa"}
rows = {}
for r in report["results"]:
    rows.setdefault((r["workload"], r["case"]), {})[r["provider"]] = r
for (workload, case), by in rows.items():
    ours, other = by["pagedattn"], by["pagedattn-default"]
    gather = (f" {ours['gather_ceiling_tbps']:.2f} | {ours['pct_gather']:.0f} % |"
              if "gather_ceiling_tbps" in ours else "")
    print(f"| {workload} | {case} | {g(ours['time_ms'])} | {ours['tbps']:.2f} | {ours['pct_hbm']:.0f} % |{gather} "
          f"{ours['tflops']:.0f} | `{ours['profile']['short']}` ({ours['profile']['source']}) | "
          f"{g(other['time_ms'])} ({other['profile']['source'].replace(' (no table)', '')}) | {other['time_ms'] / ours['time_ms']:.2f}x | "
          f"{sdpa_ms[case]:.3f} | {ours['rel_l2']:.1e} |")
