"""v42 call 7, under ncu (`--profile-from-start off`): the unified keys-as-rows kernel on the FP8 long request (q=4,
q=1) and FP8 MTP verify 16q/1kv at 32,768 keys, each called three times through `api.unified_attention` (the GPU's
dispatcher: on an H100 the sm90 rules, the H200 table's profiles) with only the third call profiled, so that ncu's
full set says where a 64-row step's time goes: the tensor pipe's and shared memory's utilisation against the
warps' stall reasons (perf-notes v42 item 4). The order of the profiled calls is printed to stderr.
Usage: ncu --profile-from-start off ... ncu_keys_rows.py"""
import sys

import torch

from pagedattn import api, workloads

CASES = (("long-request", "B=1 q=4 kv=131072 16q/1kv d256 fp8"), ("mtp-verify", "B=20 q=4 kv=32768 16q/1kv d256 fp8"),
         ("long-request", "B=1 q=1 kv=131072 16q/1kv d256 fp8"))

for name, label in CASES:
    case = next(c for c in workloads.get_workload(name).cases if c.label == label)
    inputs = case.build("cuda", seed=0)
    for i in range(3):
        if i == 2:
            torch.cuda.cudart().cudaProfilerStart()
        api.unified_attention(**inputs.kwargs)
        torch.cuda.synchronize()
        if i == 2:
            torch.cuda.cudart().cudaProfilerStop()
    print(f"profiled: {label}", file=sys.stderr, flush=True)
    del inputs
    torch.cuda.empty_cache()
