"""v23: single-sequence FP8 decode at head size 256 on the one-warpgroup keys-as-rows form: the wave
rule's split count (at least 4 tiles per split) against 2 and 1 tiles per split; graph timing, two
alternated runs, min; outputs NaN-prefilled and checked against float64. Usage: split_probe.py OUT.jsonl"""
import json, sys
import torch
import pagedattn
from pagedattn import reference, workloads
from pagedattn.bench import _input_sets
from pagedattn.device import DeviceInfo
from pagedattn.profiles import select
from pagedattn.timing import time_calls
from pagedattn.tune import case_shape_key

device = DeviceInfo.current()
with open(sys.argv[1], "w") as f:
    for kv in (1024, 2048, 4096, 8192):
        for hq, hkv in ((16, 1), (32, 2)):
            case = workloads.Case(f"B=1 q=1 kv={kv} {hq}q/{hkv}kv d256 fp8", workloads._uniform(1, 1, kv, hq, hkv, 256, "fp8"))
            key = case_shape_key(case)
            rules = select.untuned_selection(key, device).profile
            tiles = kv // rules.tile_n
            profiles = {f"s{s}": select.LaunchProfile.from_dict(rules.to_dict() | {"num_splits": s})
                        for s in sorted({rules.num_splits, tiles // 2, tiles})}
            sets = _input_sets(case, "cuda")
            kw = sets[0].kwargs
            ref = reference.unified_attention(**kw)
            rel, times = {}, {n: [] for n in profiles}
            for name, p in profiles.items():
                out = torch.full_like(kw["q"], float("nan"))
                pagedattn.unified_attention(**kw, out=out, profile=p)
                rel[name] = reference.rel_l2(out, ref)
            for _ in range(2):
                for name, p in profiles.items():
                    times[name].append(time_calls([lambda k=s.kwargs, p=p, o=torch.empty_like(s.kwargs["q"]):
                                                   pagedattn.unified_attention(**k, out=o, profile=p) for s in sets]))
            row = {"case": case.label, "rules": rules.short(), "ms": {n: min(t) for n, t in times.items()},
                   "ms_both": times, "rel_l2": rel}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
