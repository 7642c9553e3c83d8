"""v23: FP8 decode at head size 256 on the rules' keys-as-rows profiles, split counts at one tile per
split (v23) against four (v22's minimum), where the two differ: 1, 8 and 64 sequences over 256-16,384
keys, 16q/1kv and 32q/2kv; graph timing, two alternated runs, min; outputs NaN-prefilled, checked
against float64 (up to 400,000 keys) or the old profile's output. Usage: split_ab.py OUT.jsonl [--dry]"""
import json, sys
from pagedattn import workloads
from pagedattn.device import DeviceInfo, KNOWN_DEVICES
from pagedattn.profiles import select
from pagedattn.tune import case_shape_key

DRY = "--dry" in sys.argv
device = KNOWN_DEVICES["NVIDIA_H200"] if DRY else DeviceInfo.current()


def rules_profile(key, min_tiles):
    keep = select.MIN_TILES_PER_SPLIT_KEYS_ROWS
    select.MIN_TILES_PER_SPLIT_KEYS_ROWS = min_tiles
    try:
        return select.untuned_selection(key, device).profile
    finally:
        select.MIN_TILES_PER_SPLIT_KEYS_ROWS = keep


picked = []
for b in (1, 8, 64):
    for kv in (256, 512, 1024, 2048, 4096, 8192, 16384):
        for hq, hkv in ((16, 1), (32, 2)):
            case = workloads.Case(f"B={b} q=1 kv={kv} {hq}q/{hkv}kv d256 fp8", workloads._uniform(b, 1, kv, hq, hkv, 256, "fp8"))
            key = case_shape_key(case)
            old, new = rules_profile(key, 4), rules_profile(key, 1)
            if old != new:
                picked.append((case, old, new))
                print(case.label, old.short(), new.short(), flush=True)
if DRY:
    sys.exit()

import torch  # noqa: E402
import pagedattn  # noqa: E402
from pagedattn import reference  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.timing import time_calls  # noqa: E402

with open(sys.argv[1], "w") as f:
    for case, old, new in picked:
        sets = _input_sets(case, "cuda")
        kw = sets[0].kwargs
        profiles = {"old": old, "new": new}
        outs = {}
        for name, p in profiles.items():
            outs[name] = torch.full_like(kw["q"], float("nan"))
            pagedattn.unified_attention(**kw, out=outs[name], profile=p)
        small = sum(case.shape.kv_lens) <= 400_000
        expected = reference.unified_attention(**kw) if small else outs["old"]
        times = {n: [] for n in profiles}
        for _ in range(2):
            for name, p in profiles.items():
                times[name].append(time_calls([lambda k=s.kwargs, p=p, o=torch.empty_like(s.kwargs["q"]):
                                               pagedattn.unified_attention(**k, out=o, profile=p) for s in sets]))
        row = {"case": case.label, "profiles": {n: p.short() for n, p in profiles.items()},
               "ms": {n: min(t) for n, t in times.items()}, "ms_both": times,
               "rel_l2": {n: reference.rel_l2(o, expected) for n, o in outs.items()},
               "nan": any(bool(o.isnan().any()) for o in outs.values())}
        row["new_over_old"] = row["ms"]["new"] / row["ms"]["old"]
        print(json.dumps(row), flush=True)
        f.write(json.dumps(row) + "\n")
        del sets, outs
        torch.cuda.empty_cache()
