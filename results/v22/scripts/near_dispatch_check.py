"""v22 call 5: calls near the H200 table's buckets (batch x 1/2 or 2, keys x 1/4 to 2; build/v22/near_shapes.py)
where the dispatcher's choice differs from the rules': both timed twice in alternation (graph timing,
inputs rotated past L2); each output checked against float64 (NaN-prefilled) up to 400,000 keys in
the batch, against the other pick's output above."""
import json, sys
import torch
import pagedattn
from pagedattn import reference, workloads
from pagedattn.bench import _input_sets
from pagedattn.device import DeviceInfo
from pagedattn.profiles import select
from pagedattn.timing import time_calls
from pagedattn.tune import case_shape_key

sys.path.insert(0, "build/v22")
from near_shapes import near_shapes  # noqa: E402

device = DeviceInfo.current()
picked = []
for nb, q, nkv, hq, hkv, d, page, kvd, wname in near_shapes():
    if nb * nkv > 1_400_000:
        continue
    case = workloads.Case(f"B={nb} q={q} kv={nkv} {hq}q/{hkv}kv d{d} {kvd}",
                          workloads.UnifiedShape((q,) * nb, (nkv,) * nb, hq, hkv, d, page, kv_dtype=kvd))
    key = case_shape_key(case)
    chosen, rules = select.select_profile(key, device), select.untuned_selection(key, device)
    if chosen.profile != rules.profile:
        picked.append((case, chosen, rules))
picked = picked[::2]
with open(sys.argv[1], "w") as f:
    for case, chosen, rules in picked:
        sets = _input_sets(case, "cuda")
        kw = sets[0].kwargs
        outs = {}
        for name, p in (("dispatched", chosen.profile), ("rules", rules.profile)):
            outs[name] = torch.full_like(kw["q"], float("nan"))
            pagedattn.unified_attention(**kw, out=outs[name], profile=p)
        small = sum(case.shape.kv_lens) <= 400_000
        expected = reference.unified_attention(**kw) if small else outs["rules"]
        rel = {n: reference.rel_l2(o, expected) for n, o in outs.items()}
        times = {"dispatched": [], "rules": []}
        for _ in range(2):
            for name, p in (("dispatched", chosen.profile), ("rules", rules.profile)):
                times[name].append(time_calls([lambda k=s.kwargs, p=p, o=torch.empty_like(s.kwargs["q"]):
                                               pagedattn.unified_attention(**k, out=o, profile=p) for s in sets]))
        row = {"case": case.label, "dispatched": chosen.profile.short(), "source": chosen.source,
               "rules": rules.profile.short(), "ms": {n: min(t) for n, t in times.items()}, "ms_both": times,
               "rel_l2": rel, "checked_against": "float64" if small else "the rules' output",
               "nan": any(bool(o.isnan().any()) for o in outs.values())}
        row["dispatched_over_rules"] = row["ms"]["dispatched"] / row["ms"]["rules"]
        print(json.dumps(row), flush=True)
        f.write(json.dumps(row) + "\n")
        del sets, outs
        torch.cuda.empty_cache()
