"""Offline (no GPU): the sparse Gluon kernels' sm90 builds, their registers and the SASS instructions
of their KV loop's hot path by opcode (`compile_report.hot_loop`): the exchange kernel at 32- and
16-key tiles (both page types, group 12) and the keys-as-rows kernel (FP8, groups 3, 6, 12), one
split (the bench's prefill shapes). Run from a checkout's root: python3 results/v26/scripts/loop_count.py [OUT.json]"""
import json, sys
sys.path.insert(0, "scripts"); sys.path.insert(0, ".")
import compile_report as cr  # noqa: E402
from pagedattn.profiles.types import LaunchProfile  # noqa: E402

builds = []
for kv, tile in (("fp8", 32), ("fp8", 16), ("bf16", 32), ("bf16", 16)):
    prof = LaunchProfile(16, tile, 1, 2, 2, shared_exchange=True)
    builds.append((f"exchange {kv} group 12 tile {tile} st2", cr.compile_sparse_exchange("bf16", kv, 12, 256, 16, prof, False,
                                                                                          sass=True)))
for group in (3, 6, 12):
    prof = LaunchProfile(16, 64, 1, 4, 2, keys_as_rows=True)
    builds.append((f"keys-rows fp8 group {group} tile 64 st2", cr.compile_sparse_keys_rows("bf16", group, 256, 16, prof, False,
                                                                                             sass=True)))
rows = []
for form, build in builds:
    count, ops = cr.hot_loop(build["sass"])
    rows.append({"form": form, "regs": build["regs"], "hot_loop": count, "ops": ops})
    print(form, "regs", build["regs"], "hot loop", count, {k: ops.get(k, 0) for k in ("F2FP", "PRMT", "HMMA", "HGMMA", "SHFL", "VOTE")})
if len(sys.argv) > 1:
    json.dump(rows, open(sys.argv[1], "w"), indent=1)
