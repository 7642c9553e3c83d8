"""v22 A/B: the two-consumer (warp-specialized, shared Q) wgmma verify prototype against the library's
wgmma kernel on BF16 MTP; outputs checked against float64 (NaN-prefilled); graph timing, alternated."""
import functools, json, sys, time
sys.path.insert(0, "build/v22/ws")
import torch
import pagedattn
from pagedattn import reference
from pagedattn.bench import _input_sets
from pagedattn.timing import time_calls
from pagedattn.workloads import Case, UnifiedShape
from verify_ws import launch_verify_ws

ROUNDS = 3
CASES = [  # (batch, q, kv, hq, hkv, library profile, ws variants (tile, stages, splits, regs))
    (20, 4, 32768, 16, 1, "m64/n16/s13/w4/st5/ahead/wgmma",
     [(16, 5, 6, 240), (16, 6, 6, 240), (16, 6, 7, 240), (32, 3, 6, 256)]),
    (20, 4, 70000, 16, 1, "m64/n16/s13/w4/st5/ahead/wgmma", [(16, 6, 6, 240), (32, 3, 6, 256)]),
    (20, 4, 32768, 32, 2, "m64/n16/s6/w4/st4/ahead/wgmma", [(16, 6, 3, 240), (32, 3, 3, 256)]),
]
out_f = open(sys.argv[1], "w")
for batch, q, kv, hq, hkv, lib, variants in CASES:
    label = f"B={batch} q={q} kv={kv} {hq}q/{hkv}kv d256 bf16"
    case = Case(label, UnifiedShape((q,) * batch, (kv,) * batch, hq, hkv, 256, 16, kv_dtype="bf16"))
    sets = _input_sets(case, "cuda")
    expected = reference.unified_attention(**sets[0].kwargs)
    scale = 256 ** -0.5

    def ws_call(kw, o, v):
        launch_verify_ws(kw["q"], kw["k_cache"], kw["v_cache"], o, kw["cu_seqlens_q"], kw["seq_lens"], kw["block_table"],
                         max_seqlen_q=kw["max_seqlen_q"], softmax_scale=scale, tile_n=v[0], stages=v[1], splits=v[2],
                         regs=v[3])
    runs = []
    p = pagedattn.LaunchProfile.from_short(lib)
    runs.append({"name": "library " + lib, "fn": lambda kw, o, p=p: pagedattn.unified_attention(**kw, out=o, profile=p)})
    for v in variants:
        runs.append({"name": "ws n%d st%d s%d regs%d" % v, "fn": functools.partial(lambda kw, o, v: ws_call(kw, o, v), v=v)})
    for r in runs:
        out = torch.full_like(sets[0].kwargs["q"], float("nan"))
        try:
            r["fn"](sets[0].kwargs, out)
            torch.cuda.synchronize()
        except Exception as exc:
            r["error"] = repr(exc)[:300]
            print(label, r["name"], "ERROR", r["error"], flush=True)
            continue
        r["rel_l2"] = reference.rel_l2(out, expected)
        r["nan"] = bool(torch.isnan(out).any())
        r["calls"] = [functools.partial(r["fn"], s.kwargs, torch.empty_like(s.kwargs["q"])) for s in sets]
        r["ms"], r["wall"] = [], []
    for _ in range(ROUNDS):
        for r in runs:
            if "calls" in r:
                t0 = time.time()
                r["ms"].append(time_calls(r["calls"]))
                r["wall"].append((t0, time.time()))
    for r in runs:
        row = {"case": label, "bytes": sets[0].bytes_moved} | {k: v for k, v in r.items() if k not in ("calls", "fn")}
        if r.get("ms"):
            row["median_ms"] = sorted(r["ms"])[len(r["ms"]) // 2]
        print(json.dumps({k: row.get(k) for k in ("case", "name", "rel_l2", "nan", "median_ms", "ms", "error")}), flush=True)
        out_f.write(json.dumps(row) + "\n")
    del sets, runs
    torch.cuda.empty_cache()
