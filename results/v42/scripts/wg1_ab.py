"""v42: the unified keys-as-rows kernel's one-warpgroup form (64 keys per step, 4 warps) at 64 packed rows, a form the
profile layer refuses (`select.unified_keys_rows_problem`: O^T takes 128 fp32 registers per thread there; the sm90
build spills 384 bytes, 67 LDL and 22 STL per loop step), against the two-warpgroup form the GPU's dispatcher picks
(128 keys per step, 8 warps, one program per SM). Its shared memory (108,160 B at 2 stages) lets two programs share
an SM, so two independent step chains interleave where the two-warpgroup form runs one; it runs at twice the
dispatcher's split count. Cases: the FP8 long request at q=4 and FP8 MTP verify (16q/1kv at 32,768 and 70,000 keys,
32q/2kv at 32,768). `ab_probe.time_unified_case`: NaN-prefilled outputs checked against float64, alternated graph
timing, min of 5 rounds.
Usage: wg1_ab.py OUT.jsonl"""
import dataclasses
import sys

sys.path.insert(0, "scripts")
from ab_probe import time_unified_case, unified_variant  # noqa: E402
from pagedattn import workloads  # noqa: E402
from pagedattn.device import DeviceInfo  # noqa: E402
from pagedattn.ops.unified_keys_rows import launch_unified_keys_rows  # noqa: E402
from pagedattn.profiles import select  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402

LABELS = ("B=1 q=4 kv=131072 16q/1kv d256 fp8", "B=20 q=4 kv=32768 16q/1kv d256 fp8",
          "B=20 q=4 kv=70000 16q/1kv d256 fp8", "B=20 q=4 kv=32768 32q/2kv d256 fp8")

def time_against_base(path: str, name: str, launch, probe_profile) -> None:
    """Each case of LABELS timed with the dispatcher's two-warpgroup profile ("base") and with `launch` at
    probe_profile(base) (`name`), into the JSON lines file `path`."""
    cases = [c for w in ("long-request", "mtp-verify") for c in workloads.get_workload(w).cases if c.label in LABELS]
    with open(path, "w") as f:
        for case in cases:
            base = select.select_profile(case_shape_key(case), DeviceInfo.current()).profile
            assert base.keys_as_rows and base.tile_n == 128, (case.label, base)
            probe = probe_profile(base)
            print(case.label, base.short(), probe.short(), flush=True)
            time_unified_case(case, {"base": unified_variant(launch_unified_keys_rows, base),
                                     name: unified_variant(launch, probe)}, f, runs=5)


if __name__ == "__main__":
    time_against_base(sys.argv[1], "wg1", launch_unified_keys_rows, lambda base: dataclasses.replace(
        base, tile_n=64, num_warps=4, num_splits=2 * base.num_splits))
