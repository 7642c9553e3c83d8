"""v23: decode (q=1) at head size 256 of 8 and 64 sequences over 1,024-16,384 keys, 16q/1kv and
32q/2kv: the dispatched profile against the other kernels' forms (keys-as-rows two- and
one-warpgroup for FP8 pages, wgmma for both page types, the Triton default), each with the wave
rule's split count; graph timing, inputs rotated past L2, two alternated runs, min. Outputs
NaN-prefilled, checked against float64 (up to 400,000 keys in the batch) or the dispatched output.
Usage: decode_probe.py OUT.jsonl [c4|c5|c8] [--dry]"""
import json, sys
from pagedattn import workloads
from pagedattn.device import DeviceInfo, KNOWN_DEVICES
from pagedattn.profiles import select
from pagedattn.profiles.types import LaunchProfile
from pagedattn.tune import case_shape_key

DRY = "--dry" in sys.argv
device = KNOWN_DEVICES["NVIDIA_H200"] if DRY else DeviceInfo.current()
FORMS = {
    "keysrows128": LaunchProfile(block_m=16, tile_n=128, num_warps=8, num_stages=2, keys_as_rows=True),
    "keysrows64": LaunchProfile(block_m=16, tile_n=64, num_warps=4, num_stages=2, keys_as_rows=True),
    "wgmma": LaunchProfile(block_m=64, tile_n=16, num_warps=4, num_stages=4, warpgroup_mma=True),
    "wgmma-ahead": LaunchProfile(block_m=64, tile_n=16, num_warps=4, num_stages=4, warpgroup_mma=True,
                                 addresses_ahead=True),
}
PLAN = {  # call 4, then call 5 (shorter keys, single sequences), call 8 (short BF16)
    "c4": [(dt, b, kv) for dt, kvs in (("fp8", (1024, 2048, 4096)), ("bf16", (1024, 4096, 16384)))
           for b in (8, 64) for kv in kvs],
    "c5": [("fp8", b, kv) for b in (1, 8, 64) for kv in (256, 512)] + [("fp8", 1, kv) for kv in (1024, 2048, 4096)]
          + [("bf16", 1, kv) for kv in (4096, 32768, 131072)],
    "c8": [("bf16", b, kv) for b in (1, 8, 64) for kv in (64, 256, 512)],
}
cases = []
for dt, b, kv in PLAN[sys.argv[2] if len(sys.argv) > 2 and not sys.argv[2].startswith("--") else "c4"]:
    for hq, hkv in ((16, 1), (32, 2)):
        cases.append(workloads.Case(f"B={b} q=1 kv={kv} {hq}q/{hkv}kv d256 {dt}",
                                    workloads._uniform(b, 1, kv, hq, hkv, 256, dt)))
picked = []
for case in cases:
    key = case_shape_key(case)
    chosen = select.select_profile(key, device)
    profiles = {"dispatched": chosen.profile, "default": select.default_profile(key, device)}
    for name, form in FORMS.items():
        if form.keys_as_rows and key.kv_dtype != "fp8" or name == "wgmma-ahead" and key.kv_dtype == "fp8":
            continue
        if select.shape_problem(LaunchProfile.from_dict(form.to_dict() | {"block_m": 16 if form.keys_as_rows else 64}),
                                key) is None:
            profiles[name] = select.with_splits(form, key, device)
    profiles = {n: p for i, (n, p) in enumerate(profiles.items()) if p not in list(profiles.values())[:i]}
    picked.append((case, chosen, profiles))
    print(case.label, chosen.source, {n: p.short() for n, p in profiles.items()}, flush=True)
if DRY:
    sys.exit()

import torch  # noqa: E402
import pagedattn  # noqa: E402
from pagedattn import reference  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.timing import time_calls  # noqa: E402

with open(sys.argv[1], "w") as f:
    for case, chosen, profiles in picked:
        sets = _input_sets(case, "cuda")
        kw = sets[0].kwargs
        outs = {}
        for name, p in profiles.items():
            outs[name] = torch.full_like(kw["q"], float("nan"))
            pagedattn.unified_attention(**kw, out=outs[name], profile=p)
        small = sum(case.shape.kv_lens) <= 400_000
        expected = reference.unified_attention(**kw) if small else outs["dispatched"]
        times = {n: [] for n in profiles}
        for _ in range(2):
            for name, p in profiles.items():
                times[name].append(time_calls([lambda k=s.kwargs, p=p, o=torch.empty_like(s.kwargs["q"]):
                                               pagedattn.unified_attention(**k, out=o, profile=p) for s in sets]))
        ms = {n: min(t) for n, t in times.items()}
        row = {"case": case.label, "source": chosen.source, "profiles": {n: p.short() for n, p in profiles.items()},
               "ms": ms, "ms_both": times, "best": min(ms, key=ms.get),
               "rel_l2": {n: reference.rel_l2(o, expected) for n, o in outs.items()},
               "checked_against": "float64" if small else "the dispatched output",
               "nan": any(bool(o.isnan().any()) for o in outs.values())}
        print(json.dumps(row), flush=True)
        f.write(json.dumps(row) + "\n")
        del sets, outs
        torch.cuda.empty_cache()
