"""v24 call 3: split counts of v24's rule (a one-wave choice takes the most splits that fit the wave,
and no segment is left empty) against v23's (FlashAttention's 85 % rule), on the H200's no-table
rules and on the analytic default (what other GPUs get), where the two differ. Graph timing over
rotated inputs, two alternated runs each, min; outputs NaN-prefilled, checked against float64 (up
to 400,000 keys) or the old profile's output. Usage: split_probe.py OUT.jsonl [--dry]"""
import json, sys
from pagedattn import workloads
from pagedattn.device import DeviceInfo, KNOWN_DEVICES
from pagedattn.profiles import select, tables
from pagedattn.tune import case_shape_key

DRY = "--dry" in sys.argv
device = KNOWN_DEVICES["NVIDIA_H200"] if DRY else DeviceInfo.current()
NEW = select.choose_splits


def old_choose_splits(programs, tiles, slots, max_splits):
    if programs >= 0.8 * slots:
        return 1
    limit = max(1, min(max_splits, tiles // select.MIN_TILES_PER_SPLIT))
    best = max(select.wave_efficiency(programs * s, slots) for s in range(1, limit + 1))
    return next(s for s in range(1, limit + 1) if select.wave_efficiency(programs * s, slots) >= select.WAVE_SLACK * best)


def choice(key, how, rule):
    select.choose_splits = rule
    tables.clear_cache()
    try:
        return select.untuned_selection(key, device).profile if how == "rules" else select.default_profile(key, device)
    finally:
        select.choose_splits = NEW


PLAN = [("rules", 1, 1, 131072, 32, 8, 128, "bf16"), ("rules", 1, 1, 131072, 16, 1, 256, "fp8"),
        ("rules", 1, 4, 131072, 16, 1, 256, "fp8"), ("rules", 1, 1, 16384, 16, 1, 256, "bf16"),
        ("rules", 1, 1, 4096, 16, 1, 256, "fp8"), ("rules", 2, 1, 32768, 16, 1, 256, "fp8"),
        ("rules", 8, 1, 32768, 16, 1, 256, "bf16"), ("rules", 8, 4, 16384, 16, 1, 256, "fp8"),
        ("rules", 20, 4, 32768, 16, 1, 256, "bf16"), ("rules", 20, 1, 32768, 16, 1, 256, "fp8"),
        ("rules", 8, 1, 4096, 16, 1, 256, "bf16"), ("rules", 1, 1, 131072, 32, 2, 256, "fp8"),
        ("rules", 2, 1, 32768, 32, 8, 128, "bf16"),
        ("default", 1, 1, 131072, 32, 8, 128, "bf16"), ("default", 1, 1, 32768, 16, 1, 256, "bf16"),
        ("default", 4, 1, 131072, 16, 1, 256, "bf16"), ("default", 8, 1, 32768, 16, 1, 256, "fp8"),
        ("default", 20, 1, 32768, 16, 1, 256, "bf16"), ("default", 1, 1, 4096, 32, 8, 128, "bf16"),
        ("default", 2, 1, 131072, 16, 1, 256, "fp8"), ("default", 4, 1, 16384, 16, 1, 256, "fp8")]

picked = []
for how, b, q, kv, hq, hkv, d, dt in PLAN:
    case = workloads.Case(f"B={b} q={q} kv={kv} {hq}q/{hkv}kv d{d} {dt}", workloads._uniform(b, q, kv, hq, hkv, d, dt))
    key = case_shape_key(case)
    old, new = choice(key, how, old_choose_splits), choice(key, how, NEW)
    picked.append((how, case, old, new))
    print(how, case.label, old.short(), new.short(), flush=True)
if DRY:
    sys.exit()

import torch  # noqa: E402
import pagedattn  # noqa: E402
from pagedattn import reference  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.timing import time_calls  # noqa: E402

with open(sys.argv[1], "w") as f:
    for how, case, old, new in picked:
        if old == new:
            continue
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
        row = {"how": how, "case": case.label, "profiles": {n: p.short() for n, p in profiles.items()},
               "ms": {n: min(t) for n, t in times.items()}, "ms_both": times,
               "rel_l2": {n: reference.rel_l2(o, expected) for n, o in outs.items()},
               "nan": any(bool(o.isnan().any()) for o in outs.values()), "checked_against": "float64" if small else "old"}
        row["new_over_old"] = row["ms"]["new"] / row["ms"]["old"]
        print(json.dumps(row), flush=True)
        f.write(json.dumps(row) + "\n")
        del sets, outs
        torch.cuda.empty_cache()
