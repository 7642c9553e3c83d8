"""v38, offline (no GPU): build/v38's bounds probes compiled for sm90 as the H200 table's profiles launch them: per
variant and form, registers, stack, the KV loop's hot-path instruction count (`compile_report.hot_loop`) and, in that
loop's order, where its page-table loads (LDG) stand among its cp.async copies (LDGSTS) and the fence.
Usage: TRITON_INTERPRET=0 PYTHONPATH=.:build/v38 python3 results/v38/scripts/offline_bounds.py"""
import importlib
import json
import re
import sys

sys.path.insert(0, "scripts")
import compile_report as cr  # noqa: E402
from pagedattn.profiles.types import LaunchProfile  # noqa: E402

FORMS = {  # name: (kernel module prefix, kv dtype, profile); the H200 table's profiles of the bench cases
    "keys-rows q=1 (m16/n64/w4)": ("ukr", "fp8", LaunchProfile(16, 64, 256, 4, 2, keys_as_rows=True)),
    "keys-rows q=4 (m64/n128/w8)": ("ukr", "fp8", LaunchProfile(64, 128, 128, 8, 2, keys_as_rows=True)),
    "wgmma bf16 MTP (m64/n16/st4)": ("vw", "bf16", LaunchProfile(64, 16, 13, 4, 4, addresses_ahead=True,
                                                                  warpgroup_mma=True)),
}


def loop_order(sass: str) -> str:
    """The kernel's LDG / LDGSTS / FENCE / BAR / HGMMA / QGMMA sequence in SASS order, runs collapsed (e.g. 'B2 G8
    S16 F1': a barrier pair, 8 loads, 16 copies, a fence)."""
    lines = [line for line in sass.splitlines() if re.match(r"\s+/\*[0-9a-f]{4,}\*/", line)]
    marks = []
    for line in lines:
        op = re.sub(r"^\s+/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?", "", line).split()[0] if line.split() else ""
        tag = {"LDG": "G", "LDGSTS": "S", "FENCE": "F", "BAR": "B", "HGMMA": "H", "QGMMA": "Q"}.get(op.split(".")[0])
        if tag:
            if marks and marks[-1][0] == tag:
                marks[-1][1] += 1
            else:
                marks.append([tag, 1])
    return " ".join(f"{t}{n}" for t, n in marks)


def main() -> None:
    for variant in ("base", "one", "end", "uns", "one_top", "uns_top"):
        for form, (prefix, kv, profile) in FORMS.items():
            if variant.endswith("_top") and prefix == "vw":
                continue  # the wgmma kernel reads its entries a step ahead in `_issue_step_tile`
            module = importlib.import_module(f"{prefix}_{variant}")
            if prefix == "ukr":
                cr.unified_keys_rows_kernel = module.unified_keys_rows_kernel
                info = cr.compile_unified_keys_rows("bf16", 16, 256, 16, profile, True, sass=True)
            else:
                cr.verify_wgmma_kernel = module.verify_wgmma_kernel
                info = cr.compile_verify_wgmma("bf16", kv, 16, 256, 16, profile, True, sass=True)
            row = {"variant": variant, "form": form, "regs": info["regs"], "stack": info["stack"]}
            if info.get("sass"):
                row["loop"] = cr.hot_loop(info["sass"])[0]
                row["order"] = loop_order(info["sass"])
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
