"""v31 call 7, under ncu (details of the split merge kernel): CALLS eager calls of `api.unified_attention` at the
H200 table's profile on one input set each of the FP8 long request (q=1, q=4) and BF16 MTP at 32,768 keys, so that
ncu (filtered to the merge kernel) reports where the merge's ~2.6 / 3.4 / 5.5 us go (kernel_times.py, call 2).
The order of the profiled calls is printed to stderr.
Usage: ncu ... merge_ncu.py"""
import sys

import torch

from pagedattn import api, workloads

CALLS = 3
CASES = (("long-request", "B=1 q=1 kv=131072 16q/1kv d256 fp8"), ("long-request", "B=1 q=4 kv=131072 16q/1kv d256 fp8"),
         ("mtp-verify", "B=20 q=4 kv=32768 16q/1kv d256 bf16"))

for name, label in CASES:
    case = next(c for c in workloads.get_workload(name).cases if c.label == label)
    inputs = case.build("cuda", seed=0)
    kw = dict(inputs.kwargs)
    for i in range(CALLS):
        api.unified_attention(**kw)
        torch.cuda.synchronize()
        print(f"{label} | call {i}", file=sys.stderr, flush=True)
    del inputs, kw
    torch.cuda.empty_cache()
