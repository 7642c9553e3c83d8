"""Where a call's time goes, kernel by kernel (GPU only).

For each selected bench case: the bench's graph-timed median (`timing.time_calls`, the tuned
table's profile), then one CUDA graph holding one call per rotated input set, replayed under
torch.profiler: each kernel's median duration, how many launches a call makes, and the median idle
gap between consecutive kernels. Used in perf-notes v10 to split MTP verify into its main kernel
and its split merge.

Usage: python3 scripts/kernel_times.py OUT.json WORKLOAD:LABEL_PART [WORKLOAD:LABEL_PART ...]
  e.g. scripts/kernel_times.py /tmp/k.json "mtp-verify:kv=32768" "long-request:fp8"
"""

import json
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

from pagedattn import bench, workloads
from pagedattn.timing import time_calls

REPLAYS = 20


def kernel_times(workload: workloads.Workload, case: workloads.Case) -> dict:
    sets = bench._input_sets(case, "cuda")
    prepared = [bench._prepare_pagedattn(workload.kernel, s.kwargs) for s in sets]
    outs = [torch.empty_like(s.kwargs["q"]) for s in sets]
    calls = [(lambda p=p, o=o: p.run(o)) for p, o in zip(prepared, outs)]
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
    return {"workload": workload.name, "case": case.label, "profile": prepared[0].profile["short"],
            "graph_us": 1e3 * graph_ms, "median_gap_us": statistics.median(gaps) if gaps else None,
            "kernels": {name: {"per_call": len(d) / n_calls, "median_us": statistics.median(d)}
                        for name, d in durations.items()}}


def main() -> None:
    out_path, specs = sys.argv[1], sys.argv[2:]
    rows = []
    for spec in specs:
        name, part = spec.split(":", 1)
        workload = workloads.get_workload(name)
        for case in (c for c in workload.cases if part in c.label):
            row = kernel_times(workload, case)
            rows.append(row)
            print(f"{name:14s} {case.label:44s} {row['graph_us']:9.1f} us  gap {row['median_gap_us']:.2f} us  "
                  f"{row['profile']}", flush=True)
            for kernel, k in row["kernels"].items():
                print(f"    {k['per_call']:4.1f} x {k['median_us']:9.2f} us  {kernel[:70]}", flush=True)
            torch.cuda.empty_cache()
    with open(out_path, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
