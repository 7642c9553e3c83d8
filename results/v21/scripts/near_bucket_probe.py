"""Calls near a tuned bucket but not on it (other batch sizes, 5-8 draft tokens): the table's profile
as v21 found it (its split count as tuned) against the split count scaled to the call's programs
(`select.table_profile_for_call`) and the rules' choice; each checked against the float64 reference,
timed twice in alternation (graph timing, inputs rotated past L2)."""
import json, sys
import pagedattn
from pagedattn import reference
from pagedattn.bench import _input_sets
from pagedattn.device import DeviceInfo
from pagedattn.profiles import select, tables
from pagedattn.timing import time_calls
from pagedattn.tune import case_shape_key
from pagedattn.workloads import Case, UnifiedShape

SHAPES = [(20, 8, kv, pages) for kv in (8192, 32768) for pages in ("bf16", "fp8")] + \
    [(b, 4, 32768, pages) for b in (10, 16, 40) for pages in ("bf16", "fp8")] + [(2, 1, 131072, "fp8")]

device = DeviceInfo.current()
with open(sys.argv[1], "w") as f:
    for batch, q, kv, pages in SHAPES:
        label = f"B={batch} q={q} kv={kv} 16q/1kv d256 {pages}"
        case = Case(label, UnifiedShape((q,) * batch, (kv,) * batch, 16, 1, 256, 16, kv_dtype=pages))
        key = case_shape_key(case)
        picks = {"tuned-splits": tables.lookup(key, device.name)[0], "scaled": select.select_profile(key, device).profile,
                 "rules": select.untuned_selection(key, device).profile}
        sets = _input_sets(case, "cuda")
        expected = reference.unified_attention(**sets[0].kwargs)
        profiles = list(dict.fromkeys(picks.values()))
        rel = {p: reference.rel_l2(pagedattn.unified_attention(**sets[0].kwargs, profile=p), expected) for p in profiles}
        times = {p: [] for p in profiles}
        for _ in range(2):
            for p in profiles:
                times[p].append(time_calls([lambda k=s.kwargs, p=p: pagedattn.unified_attention(**k, profile=p) for s in sets]))
        for name, p in picks.items():
            row = {"shape": label, "pick": name, "profile": p.short(), "ms": min(times[p]), "ms_both": times[p],
                   "tbps": sets[0].bytes_moved / min(times[p]) / 1e9, "rel_l2": rel[p]}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
