"""A/B of a kernel change before any re-tune: time two source trees on the same cases and profiles,
in one GPU call, each checked against the float64 reference.

    mkdir -p build/ab-old && git archive HEAD pagedattn | tar -x -C build/ab-old   # the old sources
    PYTHONPATH=. python3 scripts/compare_sources.py --old build/ab-old --json ab.json \
        [--case WORKLOAD "LABEL" ...] [--profile m64/n32/s12/w4/st4 ...] [--tiny]

(`build/` is git-ignored: name it in the device tool's `carry`.) `--tiny` takes the workloads' tiny
cases, which run on a CPU under the interpreter (timings meaningless there; the check is not).

Each tree runs in its own process (PYTHONPATH = that tree, so the two never share a compiled
kernel). Per case it times the profile the old tree's table holds for the case (the profile the
change must beat without re-tuning) and every `--profile` that fits the case's kernel (BLOCK_M 64+
for unified verify, 16 for sparse), with the benchmark's timing (`pagedattn.timing.time_calls`:
CUDA-graph medians over inputs rotated past L2). Output: one JSON row per (tree, case, profile)
with ms and rel-L2, and a side-by-side table on stdout. Used for perf-notes v5 (A/B table).
"""

import argparse
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

HEADLINE = [
    ("mtp-verify", "B=20 q=4 kv=32768 16q/1kv d256 bf16"),
    ("mtp-verify", "B=20 q=4 kv=32768 16q/1kv d256 fp8"),
    ("mtp-verify", "B=20 q=4 kv=70000 16q/1kv d256 fp8"),
    ("gqa-decode", "B=64 q=1 kv=32768 32q/8kv d128 bf16"),
    ("dense-prefill", "B=4 q=kv=8192 32q/8kv d128 bf16"),
    ("sparse-prefill", "rows=8192 24q/2kv d256 bf16"),
    ("sparse-prefill", "rows=8192 24q/2kv d256 fp8"),
]


def run_side(tree: str, cases: list, extra: list[dict], table: Path, tiny: bool) -> list[dict]:
    """In the child process: time every (case, profile) with the sources on PYTHONPATH (profiles
    arrive as dicts: `LaunchProfile.from_dict` is all the two trees must share)."""
    import torch

    import pagedattn
    from pagedattn import LaunchProfile, reference
    from pagedattn.bench import _input_sets
    from pagedattn.timing import time_calls
    from pagedattn.workloads import get_workload

    tuned = {e["case"]: LaunchProfile.from_dict(e["profile"]) for e in json.loads(table.read_text())["entries"]}
    device = "cuda" if torch.cuda.is_available() else "cpu"
    rows = []
    for workload, label in cases:
        wl = get_workload(workload)
        case = next(c for c in (wl.tiny if tiny else wl.cases) if c.label == label)
        sets = _input_sets(case, device)
        fn, ref = ((pagedattn.unified_attention, reference.unified_attention) if wl.kernel == "unified"
                   else (pagedattn.sparse_attention, reference.sparse_attention))
        expected = ref(**sets[0].kwargs)
        base = tuned.get(label)
        profiles = [base] if base else []
        for prof in map(LaunchProfile.from_dict, extra):
            if (base is None or prof.block_m == base.block_m) and prof not in profiles:
                profiles.append(prof)
        for prof in profiles:
            out = torch.full_like(sets[0].kwargs["q"], float("nan"))
            try:
                fn(**sets[0].kwargs, out=out, profile=prof)
            except ValueError as err:  # a profile this tree's profile layer refuses (a kernel it lacks)
                print(json.dumps({"tree": tree, "case": label, "profile": prof.short(), "refused": str(err)}),
                      flush=True)
                continue
            outs = [torch.empty_like(s.kwargs["q"]) for s in sets]
            ms = time_calls([functools.partial(fn, **s.kwargs, out=o, profile=prof) for s, o in zip(sets, outs)])
            rows.append({"tree": tree, "workload": workload, "case": label, "profile": prof.short(), "ms": ms,
                         "rel_l2": reference.rel_l2(out, expected)})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="directory holding the old `pagedattn` package")
    parser.add_argument("--new", default=str(Path(__file__).resolve().parent.parent), help="the new tree (default: this checkout)")
    parser.add_argument("--case", nargs=2, action="append", metavar=("WORKLOAD", "LABEL"), help="default: headline cases")
    parser.add_argument("--profile", action="append", default=[], help="extra profile, e.g. m64/n32/s12/w4/st4/ahead")
    parser.add_argument("--tiny", action="store_true", help="the workloads' tiny cases (CPU interpreter)")
    parser.add_argument("--json", required=True)
    parser.add_argument("--side", help=argparse.SUPPRESS)
    parser.add_argument("--profiles-json", default="[]", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tiny and not args.case:
        parser.error("--tiny needs --case (the headline cases are real sizes)")
    cases = [tuple(c) for c in args.case] if args.case else HEADLINE
    table = Path(args.old) / "pagedattn" / "profiles" / "tables" / "NVIDIA_H200.json"
    if args.side:
        extra = json.loads(args.profiles_json)
        Path(args.json).write_text(json.dumps(run_side(args.side, cases, extra, table, args.tiny), indent=1))
        return 0
    from pagedattn.profiles.types import LaunchProfile

    extra = json.dumps([LaunchProfile.from_short(p).to_dict() for p in args.profile])
    rows = []
    for tree in (args.old, args.new):
        part = Path(args.json).with_suffix(f".{Path(tree).name}.json")
        argv = [sys.executable, __file__, "--side", tree, "--old", args.old, "--json", str(part)]
        argv += [a for c in cases for a in ("--case", *c)] + ["--profiles-json", extra] + (["--tiny"] if args.tiny else [])
        subprocess.run(argv, env=os.environ | {"PYTHONPATH": str(Path(tree).resolve())}, check=True)
        rows += json.loads(part.read_text())
    Path(args.json).write_text(json.dumps(rows, indent=1))
    old = {(r["case"], r["profile"]): r["ms"] for r in rows if r["tree"] == args.old}
    for r in rows:
        if r["tree"] == args.new:
            before = old.get((r["case"], r["profile"]))
            change = f"{r['ms'] / before - 1:+.0%}" if before else "-"
            print(f"{r['case']:40s} {r['profile']:30s} old {before or float('nan'):8.4f}  new {r['ms']:8.4f}  {change}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
