"""v28 call 5: how the streaming read's rate depends on the bytes read (`bench.stream_read`, the best of
its READ_VARIANTS per size, flat float32 buffers of 64 MB to 2 GB, graph timing), beside call 4's paged
read (results/v28/scripts/paged_read.py) of the FP8 long request (67 MB) and of two more FP8 cases.
Usage: stream_sizes.py OUT.json"""
import functools, json, sys
import torch
from triton import cdiv
from pagedattn import workloads
from pagedattn.bench import READ_VARIANTS, stream_read
from pagedattn.timing import time_calls

sys.argv, out_path = sys.argv[:1], sys.argv[1]
sys.path.insert(0, "results/v28/scripts")
import paged_read  # noqa: E402  (runs nothing at import: its measurement is under __main__)

result = {"stream": {}, "paged": {}}
for mb in (64, 128, 256, 512, 2048):
    x = torch.rand(mb * 2**20 // 4, device="cuda")
    rates = {}
    for block, warps in READ_VARIANTS:
        partials = torch.empty(cdiv(x.numel(), block), device="cuda")
        rates[f"{block}x{warps}w"] = x.numel() * 4 / time_calls([functools.partial(stream_read, x, partials, block, warps)]) / 1e9
    result["stream"][mb] = rates
    print(mb, "MB", max(rates.values()), flush=True)
    del x
for label in ("B=1 q=4 kv=131072 16q/1kv d256 fp8", "B=20 q=4 kv=32768 16q/1kv d256 fp8"):
    case = next(c for wl in ("long-request", "mtp-verify") for c in workloads.get_workload(wl).cases if c.label == label)
    result["paged"][label] = paged_read.best_paged_read(case, max(result["stream"][2048].values()))
    print(label, json.dumps(result["paged"][label]["best"]), flush=True)
json.dump(result, open(out_path, "w"), indent=1)
