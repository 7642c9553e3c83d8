"""v38 call 1: build/v38's bounds probes (make_variants.py) against commit 97f0dc6's kernels (ukr_base.py,
vw_base.py), same profiles (the H200 table's, `previous_profiles`), on the bench cases that run the two Gluon
unified kernels: the FP8 long request at q=1 and q=4 and FP8 MTP verify on the keys-as-rows kernel (base, one,
one_top, uns), BF16 MTP verify on the wgmma kernel (base, one, end, uns); `ab_probe.time_unified_case`:
NaN-prefilled outputs checked against float64, alternated graph timing, min of 7 rounds.
Usage: bounds_ab.py OUT.jsonl"""
import importlib
import sys

sys.path.insert(0, "scripts")
from ab_probe import time_unified_case, unified_variant  # noqa: E402
import torch  # noqa: E402
from pagedattn import workloads  # noqa: E402
from pagedattn.profiles.tables import previous_profiles  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402

KEYS_ROWS = ("q=1 kv=131072 16q/1kv d256 fp8", "q=4 kv=131072 16q/1kv d256 fp8", "kv=32768 16q/1kv d256 fp8",
             "kv=32768 32q/2kv d256 fp8", "kv=70000 16q/1kv d256 fp8")
WGMMA = ("kv=32768 16q/1kv d256 bf16", "kv=70000 16q/1kv d256 bf16", "kv=32768 32q/2kv d256 bf16")


def launchers(label: str) -> dict | None:
    """The variants' launchers for the case labelled `label` (None: not timed)."""
    if any(name in label for name in KEYS_ROWS):
        return {v: importlib.import_module(f"ukr_{v}").launch_unified_keys_rows for v in ("base", "one", "one_top", "uns")}
    if any(name in label for name in WGMMA):
        return {v: importlib.import_module(f"vw_{v}").launch_verify_wgmma for v in ("base", "one", "end", "uns")}
    return None


if __name__ == "__main__":
    with open(sys.argv[1], "w") as f:
        for name in ("long-request", "mtp-verify"):
            for case in workloads.get_workload(name).cases:
                chosen = launchers(case.label)
                if chosen:
                    profile = previous_profiles(case_shape_key(case), "NVIDIA_H200")[0]
                    time_unified_case(case, {k: unified_variant(launch, profile) for k, launch in chosen.items()}, f,
                                      runs=7)
                    torch.cuda.empty_cache()
