"""Same kernel, same inputs: does the time depend on the process's allocation history or on sustained load?
Prints one JSON line per timing with a wall-clock stamp (nvidia-smi samples clocks beside it)."""
import json, sys, time
import torch
from pagedattn import workloads
from pagedattn.bench import _input_sets, _prepare_pagedattn
from pagedattn.timing import time_calls

mode = sys.argv[1]
label = "B=20 q=4 kv=32768 16q/1kv d256 " + (sys.argv[2] if len(sys.argv) > 2 else "bf16")
junk = None
if mode == "junk-freed":  # allocate and release 40 GB first: the inputs land on recycled addresses
    junk = [torch.empty(1 << 30, dtype=torch.uint8, device="cuda") for _ in range(40)]
    del junk
    torch.cuda.empty_cache()
elif mode == "junk-kept":  # 40 GB held below the inputs
    junk = [torch.empty(1 << 30, dtype=torch.uint8, device="cuda") for _ in range(40)]
case = next(c for c in workloads.get_workload("mtp-verify").cases if c.label == label)
sets = _input_sets(case, "cuda")
prep = [_prepare_pagedattn("unified", s.kwargs) for s in sets]
outs = [torch.empty_like(s.kwargs["q"]) for s in sets]
calls = [(lambda p=p, o=o: p.run(o)) for p, o in zip(prep, outs)]


def stamp(tag):
    ms = time_calls(calls)
    print(json.dumps({"mode": mode, "case": label, "tag": tag, "t": time.time(), "ms": ms,
                      "profile": prep[0].profile["short"]}), flush=True)


for i in range(4):
    stamp(f"fresh{i}")
if mode == "load":  # 8 s of back-to-back calls, then time again, then after 5 s idle
    t_end = time.time() + 8
    while time.time() < t_end:
        for _ in range(200):
            calls[0]()
        torch.cuda.synchronize()
    for i in range(4):
        stamp(f"after-load{i}")
    time.sleep(5)
    for i in range(4):
        stamp(f"after-idle{i}")
