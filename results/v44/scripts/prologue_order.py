"""v44, offline (no GPU): the order in which ptxas issues a build/v44 form's prologue memory operations, up to its first
wgmma: global loads (LDG; LDG.128 for q's 16-byte loads), cp.async copies (LDGSTS), barriers, shuffles and shared
stores, runs of one kind counted (items 6: ukr_base / ukr_early / ukr_earlyv / ukr_qbar at 64 packed rows, two
warpgroups, 2 stages; vw_base / vw_fill at BF16 MTP's profile, 4 stages, the table read ahead).
Usage: TRITON_INTERPRET=0 PYTHONPATH=.:build/v44:results/v44/scripts python3 results/v44/scripts/prologue_order.py FORM ..."""
import importlib
import re
import sys

sys.path.insert(0, "scripts")
import compile_report as cr  # noqa: E402
from offline_variants import PROFILES, compiled  # noqa: E402

OPS = ("LDG", "LDGSTS", "BAR", "SHFL", "STS")


def build(form: str) -> str:
    module = importlib.import_module(form)
    if not form.startswith("vw_"):
        return compiled(module.unified_keys_rows_kernel, PROFILES[0])["sass"]
    kernel = module.verify_wgmma_kernel
    floats = {"scale_log2", "softmax_scale", "k_scale_value", "v_scale_value"}
    sig, const = cr._signature(kernel, cr._pointer_types("bf16", "bf16", "unified"), floats, {"k_scale_ptr", "v_scale_ptr"})
    const.update(NUM_Q_HEADS=16, GROUP=16, D=256, PAGE=16, TILE_N=16, STAGES=4, KV_FP8=False, PAGES_AHEAD=True,
                 SPLIT=True, SAME_STRIDES=True, K_SCALE_TENSOR=False, V_SCALE_TENSOR=False, MULTI_BLOCK=False)
    return cr._compile(kernel, sig, const, 4, 1, source=cr.GluonASTSource, sass=True)["sass"]


for form in sys.argv[1:]:
    runs = []
    for line in build(form).splitlines():
        if not re.match(r"\s+/\*[0-9a-f]{4,}\*/", line):
            continue
        op = re.sub(r"^\s+/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?", "", line).split()[0]
        if op.startswith(("HGMMA", "QGMMA")):
            break
        kind = op.split(".")[0]
        if kind in OPS:
            kind += ".128" if kind == "LDG" and "LDG.E.128" in line else ""
            if runs and runs[-1][0] == kind:
                runs[-1][1] += 1
            else:
                runs.append([kind, 1])
    print(form, " ".join(f"{kind}x{n}" for kind, n in runs))
