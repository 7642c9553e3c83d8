"""v23: host time per unified_attention call (eager, no graph) on calls near a tuned bucket and on a
bucket, with the remembered selection (v23) and with the selection evaluated on every call (v22's
path: the table lookup remembered, the rules not), and of the launcher alone (the arguments the
call passes it, captured once). Time = host wall time of N calls / N, the
device synchronized after each round (N calls queue at most ~3 N launches, short of the launch
queue's depth, so the host does not wait for the device inside a round). Usage: dispatch_time.py OUT.json"""
import json, sys, time
import torch
import pagedattn
from pagedattn import workloads
from pagedattn.bench import _input_sets
from pagedattn import api
from pagedattn.api import unified_shape_key
from pagedattn.device import DeviceInfo
from pagedattn.profiles import select

DEV = "cuda" if torch.cuda.is_available() else "cpu"
N = 100 if DEV == "cuda" else 2
cases = {
    "bucket: B=64 q=1 kv=4096 32q/8kv d128 bf16": workloads._uniform(64, 1, 4096, 32, 8, 128, "bf16"),
    "near: B=16 q=1 kv=1024 32q/8kv d128 bf16": workloads._uniform(16, 1, 1024, 32, 8, 128, "bf16"),
    "near across a kernel boundary: B=10 q=4 kv=2048 16q/1kv d256 fp8": workloads._uniform(10, 4, 2048, 16, 1, 256, "fp8"),
    "near, one sequence: B=1 q=1 kv=2000 32q/8kv d128 bf16": workloads._uniform(1, 1, 2000, 32, 8, 128, "bf16"),
}
remembered = select._tuned_or_untuned
sync = torch.cuda.synchronize if DEV == "cuda" else (lambda: None)
if DEV == "cpu":  # a smoke run of the script
    cases = {"tiny": workloads._uniform(2, 1, 40, 8, 2, 64, "bf16")}
result = {}
for label, shape in cases.items():
    kw = _input_sets(workloads.Case(label, shape), DEV)[0].kwargs
    out = torch.empty_like(kw["q"])
    row = {}
    for mode, fn in (("remembered", remembered), ("every call", remembered.__wrapped__)):
        select._tuned_or_untuned = fn
        for _ in range(20):
            pagedattn.unified_attention(**kw, out=out)
        sync()
        times = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(N):
                pagedattn.unified_attention(**kw, out=out)
            times.append((time.perf_counter() - t) / N * 1e6)
            sync()
        row[mode] = sorted(times)[2]
        select._tuned_or_untuned = remembered
    captured = []
    launch = api._unified_launch
    api._unified_launch = lambda *args: captured.append(args) or launch(*args)
    pagedattn.unified_attention(**kw, out=out)
    api._unified_launch = launch
    times = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(N):
            launch(*captured[0])
        times.append((time.perf_counter() - t) / N * 1e6)
        sync()
    row["launcher alone"] = sorted(times)[2]
    key = unified_shape_key(kw["q"], kw["k_cache"], kw["block_table"], kw["max_seqlen_q"], kw.get("max_seqlen_k"))
    chosen = select.select_profile(key, DeviceInfo.current())
    row["profile"], row["source"], row["detail"] = chosen.profile.short(), chosen.source, chosen.detail
    print(label, json.dumps(row), flush=True)
    result[label] = row
json.dump(result, open(sys.argv[1], "w"), indent=1)

import cProfile, pstats  # noqa: E402  where the host time of a remembered call goes
for label, shape in list(cases.items())[1:3]:
    kw = _input_sets(workloads.Case(label, shape), DEV)[0].kwargs
    out = torch.empty_like(kw["q"])
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(N):
        pagedattn.unified_attention(**kw, out=out)
    prof.disable()
    sync()
    print(f"cProfile of {N} calls of {label}")
    pstats.Stats(prof).sort_stats("tottime").print_stats(20)
