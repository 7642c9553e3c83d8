"""v42 item 7: build/v42's carveout probes (make_carveout.py) timed against their plain copies, each at the profile the
GPU's dispatcher picks (keys-as-rows: `ukr_*`; warpgroup-MMA: `vw_*`): the FP8 long request (q=4, q=1), FP8 MTP
verify 16q/1kv at 32,768 and 70,000 keys, BF16 MTP verify 16q/1kv at 32,768 and 70,000 keys.
`ab_probe.time_unified_case`: NaN-prefilled outputs checked against float64, alternated graph timing, min of ROUNDS
rounds (default 7).
With --check: each variant launched twice on the q=4 long request (for ncu's launch statistics: the carveout applies
from a function's second launch on).
Usage: carve_ab.py OUT.jsonl [ROUNDS] | carve_ab.py --check"""
import importlib
import sys

sys.path.insert(0, "scripts")
from ab_probe import time_unified_case, unified_variant  # noqa: E402
import torch  # noqa: E402
from pagedattn import workloads  # noqa: E402
from pagedattn.device import DeviceInfo  # noqa: E402
from pagedattn.profiles import select  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402

LABELS = ("B=1 q=4 kv=131072 16q/1kv d256 fp8", "B=1 q=1 kv=131072 16q/1kv d256 fp8",
          "B=20 q=4 kv=32768 16q/1kv d256 fp8", "B=20 q=4 kv=70000 16q/1kv d256 fp8",
          "B=20 q=4 kv=32768 16q/1kv d256 bf16", "B=20 q=4 kv=70000 16q/1kv d256 bf16")


def variants(case) -> dict:
    profile = select.select_profile(case_shape_key(case), DeviceInfo.current()).profile
    kernel = "ukr" if profile.keys_as_rows else "vw"
    assert profile.keys_as_rows or profile.warpgroup_mma, (case.label, profile)
    launch = "launch_unified_keys_rows" if profile.keys_as_rows else "launch_verify_wgmma"
    print(case.label, profile.short(), flush=True)
    return {v: unified_variant(getattr(importlib.import_module(f"{kernel}_{v}"), launch), profile)
            for v in ("copy", "carve")}


if __name__ == "__main__":
    cases = [c for w in ("long-request", "mtp-verify") for c in workloads.get_workload(w).cases if c.label in LABELS]
    if sys.argv[1] == "--check":
        q4 = next(c for c in cases if c.label == LABELS[0])
        kwargs = q4.build("cuda", seed=0).kwargs
        for fn in variants(q4).values():
            for _ in range(2):
                fn(kwargs, torch.empty_like(kwargs["q"]))
                torch.cuda.synchronize()
    else:
        with open(sys.argv[1], "w") as f:
            for case in cases:
                time_unified_case(case, variants(case), f, runs=int(sys.argv[2]) if len(sys.argv) > 2 else 7)
