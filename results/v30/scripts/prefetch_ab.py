"""v30 call 5: the unified keys-as-rows kernel with an L2 prefetch of its first page-table entries beside the
bounds read (build/v30/ukr_prefetch.py, from make_variants.py) against the library's, same profiles (the H200
table's, `profiles.tables.previous_profiles`), on the bench cases that run this kernel: the FP8 long request
and FP8 MTP verify at 32,768 keys. `scripts/ab_probe.time_unified_case`: NaN-prefilled outputs checked
against float64, alternated graph timing, min of 3 rounds.
Usage: prefetch_ab.py OUT.jsonl"""
import sys
sys.path.insert(0, "scripts")
sys.path.insert(0, "build/v30")
from ab_probe import time_unified_case, unified_variant  # noqa: E402
from pagedattn import workloads  # noqa: E402
from pagedattn.ops import unified_keys_rows as library  # noqa: E402
from pagedattn.profiles.tables import previous_profiles  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402
import ukr_prefetch  # noqa: E402

CASES = ("q=1 kv=131072 16q/1kv d256 fp8", "q=4 kv=131072 16q/1kv d256 fp8", "kv=32768 16q/1kv d256 fp8",
         "kv=32768 32q/2kv d256 fp8")

with open(sys.argv[1], "w") as f:
    for name in ("long-request", "mtp-verify"):
        for case in workloads.get_workload(name).cases:
            if any(label in case.label for label in CASES):
                profile = previous_profiles(case_shape_key(case), "NVIDIA_H200")[0]
                time_unified_case(case, {"library": unified_variant(library.launch_unified_keys_rows, profile),
                                         "prefetch": unified_variant(ukr_prefetch.launch_unified_keys_rows, profile)}, f)
