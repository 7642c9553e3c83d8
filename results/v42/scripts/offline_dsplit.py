"""v42, offline (no GPU): build/v42/ukr_dsplit.py (make_dsplit.py) compiled for sm90 at 64 packed rows, one
warpgroup and 64 keys per step, against the library's two-warpgroup form: registers, stack, shared memory, whether
ptxas serialized the wgmma instructions, and the KV loop's instruction count with its local loads and stores.
Usage: TRITON_INTERPRET=0 PYTHONPATH=.:build/v42 python3 results/v42/scripts/offline_dsplit.py"""
import json
import sys

sys.path.insert(0, "scripts")
import compile_report as cr  # noqa: E402
import ukr_dsplit  # noqa: E402
from pagedattn.profiles.types import LaunchProfile  # noqa: E402

FLOATS = {"k_scale_value", "v_scale_value", "softmax_scale"}


def build(kernel, profile, extra, maxnreg=None):
    sig, const = cr._signature(kernel, cr._pointer_types("bf16", "fp8", "unified"), FLOATS, {"k_scale_ptr", "v_scale_ptr"})
    const.update(NUM_Q_HEADS=16, GROUP=16, HN=profile.block_m, D=256, PAGE=16, TILE_N=profile.tile_n,
                 STAGES=profile.num_stages, SPLIT=True, SAME_STRIDES=True, K_SCALE_TENSOR=False, V_SCALE_TENSOR=False,
                 MULTI_BLOCK=False, **extra)
    info = cr._compile(kernel, sig, const, profile.num_warps, 1, source=cr.GluonASTSource, sass=True, maxnreg=maxnreg)
    loop, ops = cr.hot_loop(info["sass"])
    return {k: info[k] for k in ("regs", "stack", "smem", "serial")} | {"loop": loop, "LDL": ops.get("LDL", 0),
                                                                         "STL": ops.get("STL", 0)}


if __name__ == "__main__":
    for stages in (2, 3):
        row = build(ukr_dsplit.unified_keys_rows_kernel, LaunchProfile(64, 64, 256, 4, stages, keys_as_rows=True),
                    {"D_PARTS": 2})
        print(json.dumps({"form": f"dsplit m64/n64/w4/st{stages}"} | row), flush=True)
    from pagedattn.ops.unified_keys_rows import unified_keys_rows_kernel
    print(json.dumps({"form": "library m64/n128/w8/st2"} | build(unified_keys_rows_kernel, LaunchProfile(
        64, 128, 128, 8, 2, keys_as_rows=True), {})), flush=True)
