"""v51: ukr_packed (q's two e4m3 terms in one Q.K^T product) against ukr_base (v50's kernel, two products), the same
profile (the dispatcher's), on the bench cases the keys-as-rows kernel runs: both FP8 long requests and FP8 MTP verify
(build/v51, make_variants.py). `ab_probe.time_unified_case`: NaN-prefilled outputs checked against float64, alternated
graph timing, min of 7 rounds.
Usage: packed_ab.py OUT.jsonl [CASE LABEL ...]"""
import importlib
import sys

sys.path.insert(0, "scripts")
from ab_probe import time_unified_case, unified_variant  # noqa: E402
from pagedattn import workloads  # noqa: E402
from pagedattn.device import DeviceInfo  # noqa: E402
from pagedattn.profiles import select  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402

CASES = ("B=1 q=1 kv=131072 16q/1kv d256 fp8", "B=1 q=4 kv=131072 16q/1kv d256 fp8",
         "B=20 q=4 kv=32768 16q/1kv d256 fp8", "B=20 q=4 kv=70000 16q/1kv d256 fp8",
         "B=20 q=4 kv=32768 32q/2kv d256 fp8")


def forms(case) -> dict:
    profile = select.select_profile(case_shape_key(case), DeviceInfo.current()).profile
    assert profile.keys_as_rows, (case.label, profile.short())
    print(case.label, profile.short(), flush=True)
    return {name: unified_variant(importlib.import_module(name).launch_unified_keys_rows, profile)
            for name in ("ukr_base", "ukr_packed")}


if __name__ == "__main__":
    wanted = sys.argv[2:] or CASES
    cases = [c for w in ("mtp-verify", "long-request") for c in workloads.get_workload(w).cases if c.label in wanted]
    with open(sys.argv[1], "w") as f:
        for case in cases:
            time_unified_case(case, forms(case), f, runs=7)
