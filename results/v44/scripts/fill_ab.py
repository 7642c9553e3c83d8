"""v44: the prologue candidates against the library's kernels, same profile (the dispatcher's), on the bench cases:
vw_fill (every page-table load of the wgmma kernel's prologue before its first copy) against vw_base on BF16 MTP
verify, and ukr_qbar (q's and the first two tiles' page-table loads before the keys-as-rows kernel's first copy)
against ukr_base on the FP8 long requests and FP8 MTP verify (build/v44, make_variants.py).
`ab_probe.time_unified_case`: NaN-prefilled outputs checked against float64, alternated graph timing, min of 7 rounds.
Usage: fill_ab.py OUT.jsonl [CASE LABEL ...]"""
import importlib
import sys

sys.path.insert(0, "scripts")
from ab_probe import time_unified_case, unified_variant  # noqa: E402
from pagedattn import workloads  # noqa: E402
from pagedattn.device import DeviceInfo  # noqa: E402
from pagedattn.profiles import select  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402

KEYS_ROWS = ("B=1 q=1 kv=131072 16q/1kv d256 fp8", "B=1 q=4 kv=131072 16q/1kv d256 fp8",
             "B=20 q=4 kv=32768 16q/1kv d256 fp8", "B=20 q=4 kv=32768 32q/2kv d256 fp8")


def forms(case) -> dict:
    profile = select.select_profile(case_shape_key(case), DeviceInfo.current()).profile
    names, launcher = (("ukr_base", "ukr_qbar"), "launch_unified_keys_rows") if profile.keys_as_rows else \
        (("vw_base", "vw_fill"), "launch_verify_wgmma")
    print(case.label, profile.short(), flush=True)
    return {name: unified_variant(getattr(importlib.import_module(name), launcher), profile) for name in names}


if __name__ == "__main__":
    cases = [c for w in ("mtp-verify", "long-request") for c in workloads.get_workload(w).cases
             if c.label in KEYS_ROWS or (w == "mtp-verify" and c.shape.kv_dtype == "bf16")]
    cases = [c for c in cases if not sys.argv[2:] or c.label in sys.argv[2:]]
    with open(sys.argv[1], "w") as f:
        for case in cases:
            time_unified_case(case, forms(case), f, runs=7)
