"""v44, offline (no GPU): build/v44's keys-as-rows forms (make_variants.py) compiled for sm90 at the two profiles the
FP8 long requests run (64 packed rows on two warpgroups, 128 keys per step; 16 rows on one warpgroup, 64 keys, at the
168-register cap): registers, stack, shared memory, whether ptxas serialized the wgmma instructions, and the KV loop's
instruction count with its local loads and stores.
Usage: TRITON_INTERPRET=0 PYTHONPATH=.:build/v44 python3 results/v44/scripts/offline_variants.py [FORM ...]"""
import importlib
import json
import sys

sys.path.insert(0, "scripts")
import compile_report as cr  # noqa: E402
from pagedattn.device import KNOWN_DEVICES  # noqa: E402
from pagedattn.profiles.select import keys_rows_register_cap  # noqa: E402
from pagedattn.profiles.types import LaunchProfile  # noqa: E402

FLOATS = {"k_scale_value", "v_scale_value", "softmax_scale"}
FORMS = ("base", "pvpipe", "chunk64", "nobar", "nopv", "nocopy", "noexp", "novote", "nolo", "nowait", "nomerge",
         "nocopy_nopv", "nocopy_novote", "nocopy_nopv_novote", "nocopy_nopv_novote_nolo")
PROFILES = (LaunchProfile(64, 128, 132, 8, 2, keys_as_rows=True), LaunchProfile(16, 64, 256, 4, 2, keys_as_rows=True))


def compiled(kernel, profile) -> dict:
    """compile_report's build of a keys-as-rows form at `profile` (16q/1kv, head size 256, FP8 pages, splits), at the
    register cap the launcher passes, with its SASS."""
    sig, const = cr._signature(kernel, cr._pointer_types("bf16", "fp8", "unified"), FLOATS, {"k_scale_ptr", "v_scale_ptr"})
    const.update(NUM_Q_HEADS=16, GROUP=16, HN=profile.block_m, D=256, PAGE=16, TILE_N=profile.tile_n,
                 STAGES=profile.num_stages, SPLIT=True, SAME_STRIDES=True, K_SCALE_TENSOR=False, V_SCALE_TENSOR=False,
                 MULTI_BLOCK=False)
    cap = keys_rows_register_cap(profile, 256, KNOWN_DEVICES["NVIDIA_H200"])
    return cr._compile(kernel, sig, const, profile.num_warps, 1, source=cr.GluonASTSource, sass=True, maxnreg=cap) | {
        "cap": cap}


def build(kernel, profile):
    info = compiled(kernel, profile)
    cap = info["cap"]
    loop, ops = cr.hot_loop(info["sass"])
    return {k: info[k] for k in ("regs", "stack", "smem", "serial")} | {
        "cap": cap, "loop": loop, "LDL": ops.get("LDL", 0), "STL": ops.get("STL", 0), "F2FP": ops.get("F2FP", 0)}


if __name__ == "__main__":
    for form in sys.argv[1:] or FORMS:
        kernel = importlib.import_module(f"ukr_{form}").unified_keys_rows_kernel
        for profile in PROFILES:
            print(json.dumps({"form": form, "profile": profile.short()} | build(kernel, profile)), flush=True)
