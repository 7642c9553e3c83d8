"""v39, offline (no GPU): build/v39's probes of the warpgroup-MMA kernel (make_variants.py) compiled for sm90 as the
H200 table's profiles launch them (BF16 MTP verify, and FP8 pages at the rule's profile): per variant and form,
registers, stack, whether ptxas serialized the wgmma instructions, the KV loop's instruction count
(`compile_report.hot_loop`, which leaves out the longest forward branch inside the loop) and its FMUL / BAR / LDS /
STS counts, and `hot`: the loop without any of its forward branches' bodies (`hot_loop(..., every_branch=True)`:
the probe's two rescale branches, one per tile; the baseline's loop has none).
Usage: TRITON_INTERPRET=0 PYTHONPATH=.:build/v39 python3 results/v39/scripts/offline_lazy.py"""
import importlib
import json
import sys

sys.path.insert(0, "scripts")
import compile_report as cr  # noqa: E402
from pagedattn.profiles.types import LaunchProfile  # noqa: E402

FORMS = {  # name: (kv dtype, group, profile)
    "bf16 MTP 16q/1kv (m64/n16/s13/st4/ahead)": ("bf16", 16, LaunchProfile(64, 16, 13, 4, 4, addresses_ahead=True,
                                                                           warpgroup_mma=True)),
    "bf16 MTP 32q/2kv (m64/n16/s6/st4/ahead)": ("bf16", 16, LaunchProfile(64, 16, 6, 4, 4, addresses_ahead=True,
                                                                          warpgroup_mma=True)),
    "fp8 verify (m64/n16/s13/st5)": ("fp8", 16, LaunchProfile(64, 16, 13, 4, 5, warpgroup_mma=True)),
}


def report(variants) -> None:
    for variant in variants:
        module = importlib.import_module(f"vw_{variant}")
        cr.verify_wgmma_kernel = module.verify_wgmma_kernel
        for form, (kv, group, profile) in FORMS.items():
            info = cr.compile_verify_wgmma("bf16", kv, group, 256, 16, profile, True, sass=True)
            loop, ops = cr.hot_loop(info["sass"])
            hot, _ = cr.hot_loop(info["sass"], every_branch=True)
            print(json.dumps({"variant": variant, "form": form, "regs": info["regs"], "stack": info["stack"],
                              "smem": info["smem"], "serial": info["serial"], "loop": loop, "hot": hot,
                              **{op: ops.get(op, 0) for op in ("FMUL", "MUFU", "BAR", "LDS", "STS", "VOTE", "BRA")}}),
                  flush=True)


if __name__ == "__main__":
    report(("base", "order", "lazy"))
