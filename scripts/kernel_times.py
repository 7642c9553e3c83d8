"""Where a call's time goes, kernel by kernel (GPU only).

For each selected bench case and each profile timed on it (the tuned table's, plus every
`--profile` that can run the case, checked against the float64 reference): the bench's
graph-timed median (`timing.time_calls`), then one CUDA graph holding one call per rotated input
set, replayed under torch.profiler: each kernel's median duration, how many launches a call
makes, and the median idle gap between consecutive kernels. With `--stream-read`, also the
bench's streaming-read kernel over buffers of the case's byte count (rotated past L2 like the
inputs): what one pass over exactly those bytes takes, launch and tail included, next to the
ceiling the bench measures on a 2 GiB buffer. Used in perf-notes v10 to split MTP verify into its
main kernel and its split merge, and in v21 for the single long request's profiles.

Usage: python3 scripts/kernel_times.py OUT.json WORKLOAD:LABEL_PART [...] [--profile SHORT ...] [--stream-read]
  e.g. scripts/kernel_times.py /tmp/k.json "mtp-verify:kv=32768" "long-request:fp8"
       scripts/kernel_times.py /tmp/k.json "long-request:q=1 kv=131072 16q/1kv" \
           --profile m16/n64/s256/w4/st3/keysrows --stream-read
"""

import argparse
import functools
import json
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

from pagedattn import LaunchProfile, bench, reference, sparse_attention, unified_attention, workloads
from pagedattn.device import DeviceInfo
from pagedattn.profiles.types import cdiv
from pagedattn.timing import rotation_count, time_calls

REPLAYS = 20


def graph_kernel_times(calls: list) -> dict:
    """Graph-timed median of one call, and per kernel its launches per call and median duration."""
    graph_ms = time_calls(calls)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for call in calls:
            call()
    graph.replay()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(REPLAYS):
            graph.replay()
        torch.cuda.synchronize()
    events = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                    key=lambda e: e.time_range.start)
    durations: dict[str, list[float]] = {}
    for e in events:
        durations.setdefault(e.name, []).append(e.time_range.elapsed_us())
    gaps = [b.time_range.start - a.time_range.end for a, b in zip(events, events[1:])]
    n_calls = REPLAYS * len(calls)
    return {"graph_us": 1e3 * graph_ms, "median_gap_us": statistics.median(gaps) if gaps else None,
            "kernels": {name: {"per_call": len(d) / n_calls, "median_us": statistics.median(d)}
                        for name, d in durations.items()}}


def stream_read_times(nbytes: int) -> dict:
    """The bench's streaming read over rotated buffers of `nbytes`, per read variant."""
    count = rotation_count(nbytes, DeviceInfo.current())
    buffers = [torch.rand(nbytes // 4, device="cuda") for _ in range(count)]
    found = {}
    for block, warps in bench.READ_VARIANTS:
        partials = torch.empty(cdiv(buffers[0].numel(), block), device="cuda")
        calls = [functools.partial(bench.stream_read, x, partials, block, warps) for x in buffers]
        found[f"{block}x{warps}w"] = graph_kernel_times(calls)
    return found


def case_rows(workload: workloads.Workload, case: workloads.Case, extra: list[LaunchProfile]) -> list[dict]:
    sets = bench._input_sets(case, "cuda")
    prepared = [bench._prepare_pagedattn(workload.kernel, s.kwargs) for s in sets]
    runs = [(prepared[0].profile["short"], "table", [p.run for p in prepared], None)]
    function, check = (unified_attention, reference.unified_attention) if workload.kernel == "unified" else \
        (sparse_attention, reference.sparse_attention)
    expected = check(**sets[0].kwargs) if extra else None
    for forced in extra:
        run = [functools.partial(lambda out, kw, p: function(**kw, out=out, profile=p), kw=s.kwargs, p=forced)
               for s in sets]
        out = torch.full_like(sets[0].kwargs["q"], float("nan"))
        try:
            run[0](out)
        except ValueError as exc:  # the profile cannot run this case
            print(f"    {forced.short()}: {exc}", flush=True)
            continue
        runs.append((forced.short(), "forced", run, reference.rel_l2(out, expected)))
    rows = []
    for short, source, run, rel_l2 in runs:
        outs = [torch.empty_like(s.kwargs["q"]) for s in sets]
        calls = [functools.partial(r, o) for r, o in zip(run, outs)]
        rows.append({"workload": workload.name, "case": case.label, "profile": short, "source": source,
                     "rel_l2": rel_l2, "bytes_moved": sets[0].bytes_moved} | graph_kernel_times(calls))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("specs", nargs="+", metavar="WORKLOAD:LABEL_PART")
    parser.add_argument("--profile", action="append", default=[], help="a profile to time as well (short form)")
    parser.add_argument("--stream-read", action="store_true", help="time a streaming read of each case's bytes")
    args = parser.parse_args()
    extra = [LaunchProfile.from_short(s) for s in args.profile]
    rows = []
    for spec in args.specs:
        name, part = spec.split(":", 1)
        workload = workloads.get_workload(name)
        for case in (c for c in workload.cases if part in c.label):
            found = case_rows(workload, case, extra)
            if args.stream_read:
                found.append({"workload": workload.name, "case": case.label, "source": "stream-read",
                              "bytes_moved": found[0]["bytes_moved"],
                              "variants": stream_read_times(found[0]["bytes_moved"])})
            for row in found:
                rows.append(row)
                for label, timed in row.get("variants", {"": row}).items():
                    print(f"{name:14s} {case.label:44s} {timed['graph_us']:9.1f} us  "
                          f"gap {timed['median_gap_us'] or 0:.2f} us  {row.get('profile', 'stream-read ' + label)}"
                          f"  rel_l2 {row.get('rel_l2')}", flush=True)
                    for kernel, k in timed["kernels"].items():
                        print(f"    {k['per_call']:4.1f} x {k['median_us']:9.2f} us  {kernel[:70]}", flush=True)
            torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
