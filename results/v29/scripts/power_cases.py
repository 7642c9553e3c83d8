"""v29 call 5: which bench cases hold the H200 at its power cap. Each case runs through the library's
dispatcher with the H200 table's profile (`bench._prepare_pagedattn`), is timed (`timing.time_calls`,
graph timing, the bench's rotated input sets) and then replayed for ~2 s as parts_power.py does (`ab_probe.sustained`), beside the
caller's 100 ms nvidia-smi log of SM clock and board power; a streaming read (1 GiB) first, for reference.
Usage: power_cases.py OUT.jsonl"""
import functools, json, sys
import torch
sys.path.insert(0, "scripts")
from ab_probe import sustained  # noqa: E402
from pagedattn import workloads  # noqa: E402
from pagedattn.bench import _input_sets, _prepare_pagedattn, stream_read  # noqa: E402
from pagedattn.timing import time_calls  # noqa: E402

CASES = {"long-request": ("q=1 kv=131072 16q/1kv d256 fp8", "q=4 kv=131072 16q/1kv d256 fp8",
                          "q=1 kv=131072 32q/8kv d128 bf16"),
         "mtp-verify": ("kv=32768 16q/1kv d256 fp8", "kv=32768 16q/1kv d256 bf16"),
         "gqa-decode": ("kv=32768 32q/8kv d128 bf16",)}

with open(sys.argv[1], "w") as f:
    x = torch.rand((1 << 30) // 4, device="cuda")
    partials = torch.empty(x.numel() // 16384, device="cuda")
    start, end, rate = sustained(functools.partial(stream_read, x, partials, 16384, 8))
    row = {"case": "stream-read-1GiB", "start": start, "end": end, "ms_sustained": 1e3 / rate,
           "tbps_sustained": x.numel() * 4 * rate / 1e12}
    print(json.dumps(row), flush=True)
    f.write(json.dumps(row) + "\n")
    del x, partials
    for name, labels in CASES.items():
        for case in workloads.get_workload(name).cases:
            if not any(label in case.label for label in labels):
                continue
            sets = _input_sets(case, "cuda")
            outs = [torch.empty_like(s.kwargs["q"]) for s in sets]
            prepared = [_prepare_pagedattn("unified", s.kwargs) for s in sets]
            ms = time_calls([functools.partial(p.run, o) for p, o in zip(prepared, outs)])
            start, end, rate = sustained(functools.partial(prepared[0].run, outs[0]))
            row = {"case": case.label, "profile": prepared[0].profile["short"], "bytes": sets[0].bytes_moved,
                   "ms": ms, "start": start, "end": end, "ms_sustained": 1e3 / rate}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
            del sets, outs, prepared
            torch.cuda.empty_cache()
