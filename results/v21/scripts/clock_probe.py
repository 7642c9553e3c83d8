"""Which kernels run the H200 into its power cap? Per case: 4 s of back-to-back CUDA-graph replays
(one call per rotated input set), the mean time per call over the last 2 s, with wall-clock stamps
so that nvidia-smi's clock / power / event-reason samples can be matched; 3 s idle between cases."""
import functools, json, sys, time
import torch
from pagedattn import bench, workloads

CASES = [("mtp-verify", "B=20 q=4 kv=32768 16q/1kv d256 bf16"), ("mtp-verify", "B=20 q=4 kv=32768 16q/1kv d256 fp8"),
         ("mtp-verify", "B=20 q=4 kv=32768 32q/2kv d256 bf16"), ("gqa-decode", "B=64 q=1 kv=32768 32q/8kv d128 bf16"),
         ("long-request", "B=1 q=1 kv=131072 16q/1kv d256 fp8")]


def replay_for(graph, seconds):
    """Replay until `seconds` pass; returns (start, end, replays) of the second half."""
    t_end = time.time() + seconds
    half = time.time() + seconds / 2
    n, t0 = 0, None
    while time.time() < t_end:
        graph.replay()
        torch.cuda.synchronize()
        if t0 is None and time.time() >= half:
            t0 = time.time()
        elif t0 is not None:
            n += 1
    return t0, time.time(), n


def graph_of(calls):
    for call in calls:
        call()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(10):
            for call in calls:
                call()
    return graph


out = open(sys.argv[1], "w")
x = torch.rand(1 << 28, device="cuda")  # 1 GiB
partials = torch.empty(workloads.cdiv(x.numel(), 8192), device="cuda")
read = functools.partial(bench.stream_read, x, partials, 8192, 8)
t0, t1, n = replay_for(graph_of([read]), 4)
row = {"case": "stream-read 1 GiB", "t0": t0, "t1": t1, "ms_per_call": (t1 - t0) * 1e3 / (10 * n), "bytes": x.numel() * 4}
print(json.dumps(row), flush=True); out.write(json.dumps(row) + "\n")
del x
for name, label in CASES:
    time.sleep(3)
    case = next(c for c in workloads.get_workload(name).cases if c.label == label)
    sets = bench._input_sets(case, "cuda")
    prepared = [bench._prepare_pagedattn(workloads.get_workload(name).kernel, s.kwargs) for s in sets]
    outs = [torch.empty_like(s.kwargs["q"]) for s in sets]
    calls = [functools.partial(p.run, o) for p, o in zip(prepared, outs)]
    t0, t1, n = replay_for(graph_of(calls), 4)
    row = {"case": f"{name} {label}", "profile": prepared[0].profile["short"], "t0": t0, "t1": t1,
           "ms_per_call": (t1 - t0) * 1e3 / (10 * n * len(calls)), "bytes": sets[0].bytes_moved}
    print(json.dumps(row), flush=True); out.write(json.dumps(row) + "\n")
    del sets, prepared, outs, calls
    torch.cuda.empty_cache()
