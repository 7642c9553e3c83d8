"""v22 A/B: the wgmma kernel's pair softmax (this tree) against v21's one-tile softmax (build/v22/old),
same inputs, each output checked against float64 (NaN-prefilled), timed in alternation (graph timing,
inputs rotated past L2); wall-clock start/end of each timing for the SM clock log."""
import json, sys, time
sys.path.insert(0, "build/v22/old")
import torch
import pagedattn, pagedattn_old
from pagedattn import reference
from pagedattn.bench import _input_sets
from pagedattn.device import DeviceInfo
from pagedattn.profiles import select
from pagedattn.timing import time_calls
from pagedattn.tune import case_shape_key
from pagedattn.workloads import Case, UnifiedShape

ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
CASES = [  # (batch, q, kv, heads q, heads kv, pages, profiles)
    (20, 4, 32768, 16, 1, "bf16", ["m64/n16/s13/w4/st5/ahead/wgmma", "m64/n16/s13/w4/st4/ahead/wgmma"]),
    (20, 4, 70000, 16, 1, "bf16", ["m64/n16/s13/w4/st5/ahead/wgmma"]),
    (20, 4, 32768, 32, 2, "bf16", ["m64/n16/s6/w4/st4/ahead/wgmma"]),
    (20, 4, 8192, 16, 1, "bf16", ["m64/n16/s13/w4/st5/ahead/wgmma"]),
    (20, 8, 8192, 16, 1, "bf16", ["rules"]),
    (20, 4, 2048, 16, 1, "fp8", ["rules"]),
    (20, 4, 4096, 16, 1, "fp8", ["rules"]),
    (20, 4, 8192, 16, 1, "fp8", ["m64/n16/s13/w4/st5/wgmma"]),
]
device = DeviceInfo.current()
out_f = open(sys.argv[1], "w")
for batch, q, kv, hq, hkv, pages, shorts in CASES:
    label = f"B={batch} q={q} kv={kv} {hq}q/{hkv}kv d256 {pages}"
    case = Case(label, UnifiedShape((q,) * batch, (kv,) * batch, hq, hkv, 256, 16, kv_dtype=pages))
    key = case_shape_key(case)
    shorts = [select.untuned_selection(key, device).profile.short() if s == "rules" else s for s in shorts]
    sets = _input_sets(case, "cuda")
    expected = reference.unified_attention(**sets[0].kwargs)
    runs = []
    for name, mod in (("v21", pagedattn_old), ("pair", pagedattn)):
        for s in shorts:
            p = mod.LaunchProfile.from_short(s)
            out = torch.full_like(sets[0].kwargs["q"], float("nan"))
            mod.unified_attention(**sets[0].kwargs, out=out, profile=p)
            rel = reference.rel_l2(out, expected)
            calls = [lambda k=st.kwargs, p=p, mod=mod, o=torch.empty_like(st.kwargs["q"]): mod.unified_attention(**k, out=o, profile=p)
                     for st in sets]
            runs.append({"tree": name, "profile": s, "rel_l2": rel, "nan": bool(torch.isnan(out).any()), "calls": calls,
                         "ms": [], "wall": []})
    for _ in range(ROUNDS):
        for r in runs:
            t0 = time.time()
            r["ms"].append(time_calls(r["calls"]))
            r["wall"].append((t0, time.time()))
    for r in runs:
        row = {"case": label, "bytes": sets[0].bytes_moved} | {k: v for k, v in r.items() if k != "calls"}
        row["median_ms"] = sorted(r["ms"])[len(r["ms"]) // 2]
        print(json.dumps({k: row[k] for k in ("case", "tree", "profile", "rel_l2", "nan", "median_ms", "ms")}), flush=True)
        out_f.write(json.dumps(row) + "\n")
    del sets, runs
    torch.cuda.empty_cache()
