"""v22 (calls 3, 4): calls near a tuned bucket where the bucket's profile and the rules' differ in kernel (FP8 MTP
over 2,048 / 4,096 keys near the 8,192-key buckets: keys-as-rows vs wgmma) or in splitting (GQA decode
and verify at B=32 near the B=64 buckets: one pass vs the wave rule's split, and the split count scaled
by the programs as v21 does for splitting profiles). Each output checked against float64
(NaN-prefilled), timed twice in alternation (graph timing, inputs rotated past L2)."""
import json, sys
import torch
import pagedattn
from pagedattn import reference
from pagedattn.bench import _input_sets
from pagedattn.device import DeviceInfo
from pagedattn.profiles import select
from pagedattn.timing import time_calls
from pagedattn.tune import case_shape_key
from pagedattn.workloads import Case, UnifiedShape

SHAPES = [(b, 4, kv, 16, 1, 256, "fp8", ()) for b in (10, 20, 40) for kv in (2048, 4096)] + \
    [(20, 4, kv, 32, 2, 256, "fp8", ()) for kv in (2048, 4096)] + \
    [(32, 1, kv, 32, 8, 128, "bf16", (2,)) for kv in (4096, 16384, 32768)] + \
    [(32, 4, kv, 32, 8, 128, "bf16", (2,)) for kv in (4096, 32768)]
if len(sys.argv) > 2:  # call 4: the calls the keys-per-SM rule moves off the bucket's kernel, both kernels timed
    SHAPES = [(10, 4, 8192, 16, 1, 256, "fp8", ()), (1, 4, 32768, 16, 1, 256, "fp8", ()),
              (1, 4, 65536, 16, 1, 256, "fp8", ()), (2, 4, 32768, 16, 1, 256, "fp8", ()),
              (10, 4, 4096, 32, 2, 256, "fp8", ()), (2, 4, 65536, 16, 1, 256, "fp8", ())]
device = DeviceInfo.current()
with open(sys.argv[1], "w") as f:
    for batch, q, kv, hq, hkv, d, pages, extra_splits in SHAPES:
        label = f"B={batch} q={q} kv={kv} {hq}q/{hkv}kv d{d} {pages}"
        case = Case(label, UnifiedShape((q,) * batch, (kv,) * batch, hq, hkv, d, 16, kv_dtype=pages))
        key = case_shape_key(case)
        picks = {"table": select.select_profile(key, device).profile, "rules": select.untuned_selection(key, device).profile}
        if len(sys.argv) > 2:  # the near bucket's profile with v21's split scaling, as dispatched before v22
            from pagedattn.profiles import tables
            tuned, entry = tables.lookup(key, device.name)
            picks["bucket-scaled"] = select.table_profile_for_call(tuned, select.ShapeKey(**entry["key"]), key)
        for s in extra_splits:
            picks[f"table-s{s}"] = pagedattn.LaunchProfile.from_dict(picks["table"].to_dict() | {"num_splits": s})
        sets = _input_sets(case, "cuda")
        expected = reference.unified_attention(**sets[0].kwargs)
        profiles = list(dict.fromkeys(picks.values()))
        rel = {}
        for p in profiles:
            out = torch.full_like(sets[0].kwargs["q"], float("nan"))
            pagedattn.unified_attention(**sets[0].kwargs, out=out, profile=p)
            rel[p] = reference.rel_l2(out, expected)
        times = {p: [] for p in profiles}
        for _ in range(2):
            for p in profiles:
                times[p].append(time_calls([lambda k=s.kwargs, p=p, o=torch.empty_like(s.kwargs["q"]):
                                            pagedattn.unified_attention(**k, out=o, profile=p) for s in sets]))
        for name, p in picks.items():
            row = {"shape": label, "pick": name, "profile": p.short(), "ms": min(times[p]), "ms_both": times[p],
                   "tbps": sets[0].bytes_moved / min(times[p]) / 1e9, "rel_l2": rel[p]}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
        del sets
        torch.cuda.empty_cache()
