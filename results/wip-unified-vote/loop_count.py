"""Offline (no GPU): the unified keys-as-rows kernel's KV loop (hot path, `compile_report.hot_loop`) at the bench's FP8 forms; run from a checkout's root with OUT.json: main gave offline-loop-counts-main.json (with this branch's compile_report.py), this branch offline-loop-counts-branch.json."""
import json, sys
sys.path.insert(0, "scripts"); sys.path.insert(0, ".")
import compile_report as cr
from pagedattn.profiles.types import LaunchProfile
rows = []
for block_m, tile, warps, splits in ((64, 128, 8, 6), (16, 128, 8, 128), (16, 64, 4, 256), (64, 128, 8, 128)):
    prof = LaunchProfile(block_m, tile, splits, warps, 2, keys_as_rows=True)
    b = cr.compile_unified_keys_rows("bf16", 16, 256, 16, prof, True, sass=True)
    n, ops = cr.hot_loop(b["sass"])
    rows.append({"form": prof.short(), "regs": b["regs"], "smem": b["smem"], "hot_loop": n, "ops": ops})
    print(prof.short(), b["regs"], b["smem"], n, {k: ops.get(k, 0) for k in ("SHFL", "VOTE", "HGMMA", "F2FP", "BAR")})
json.dump(rows, open(sys.argv[1], "w"), indent=1)
