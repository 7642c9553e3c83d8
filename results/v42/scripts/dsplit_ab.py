"""v42: build/v42/ukr_dsplit.py (make_dsplit.py: the keys-as-rows kernel with O^T's head dimensions split across two
programs, one warpgroup and 64 keys per step each, two programs per SM) against the dispatcher's two-warpgroup form
at the same split count, on the FP8 long request at q=4 and FP8 MTP verify (16q/1kv at 32,768 and 70,000 keys,
32q/2kv at 32,768). `ab_probe.time_unified_case`: NaN-prefilled outputs checked against float64, alternated graph
timing, min of 5 rounds.
Usage: dsplit_ab.py OUT.jsonl"""
import dataclasses
import sys

sys.path.insert(0, "scripts")
from ab_probe import time_unified_case, unified_variant  # noqa: E402
import ukr_dsplit  # noqa: E402
from pagedattn import workloads  # noqa: E402
from pagedattn.device import DeviceInfo  # noqa: E402
from pagedattn.ops.unified_keys_rows import launch_unified_keys_rows  # noqa: E402
from pagedattn.profiles import select  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402

LABELS = ("B=1 q=4 kv=131072 16q/1kv d256 fp8", "B=20 q=4 kv=32768 16q/1kv d256 fp8",
          "B=20 q=4 kv=70000 16q/1kv d256 fp8", "B=20 q=4 kv=32768 32q/2kv d256 fp8")

if __name__ == "__main__":
    cases = [c for w in ("long-request", "mtp-verify") for c in workloads.get_workload(w).cases if c.label in LABELS]
    with open(sys.argv[1], "w") as f:
        for case in cases:
            base = select.select_profile(case_shape_key(case), DeviceInfo.current()).profile
            assert base.keys_as_rows and base.tile_n == 128, (case.label, base)
            halves = dataclasses.replace(base, tile_n=64, num_warps=4)
            print(case.label, base.short(), halves.short(), flush=True)
            time_unified_case(case, {"base": unified_variant(launch_unified_keys_rows, base),
                                     "dsplit": unified_variant(ukr_dsplit.launch_unified_keys_rows, halves)}, f, runs=5)
