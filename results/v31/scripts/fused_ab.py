"""v31 call 1: the unified keys-as-rows kernel with its split merge done by its own last programs
(build/v31/ukr_fused.py, from make_variants.py) against the library's kernel + merge kernel, same profiles (the
H200 table's, `profiles.tables.previous_profiles`), on the bench cases that run this kernel: the FP8 long request
at q=1 and q=4 and FP8 MTP verify at 32,768 keys. `scripts/ab_probe.time_unified_case`: NaN-prefilled outputs
checked against float64, alternated graph timing, min of 5 rounds.
Usage: fused_ab.py OUT.jsonl"""
import sys
sys.path.insert(0, "scripts")
sys.path.insert(0, "build/v31")
from ab_probe import check_and_time, unified_variant  # noqa: E402
import json  # noqa: E402
import torch  # noqa: E402
from pagedattn import reference, workloads  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.ops import unified_keys_rows as library  # noqa: E402
from pagedattn.profiles.tables import previous_profiles  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402
import ukr_fused  # noqa: E402

CASES = ("q=1 kv=131072 16q/1kv d256 fp8", "q=4 kv=131072 16q/1kv d256 fp8", "kv=32768 16q/1kv d256 fp8",
         "kv=32768 32q/2kv d256 fp8")

with open(sys.argv[1], "w") as f:
    for name in ("long-request", "mtp-verify"):
        for case in workloads.get_workload(name).cases:
            if any(label in case.label for label in CASES):
                profile = previous_profiles(case_shape_key(case), "NVIDIA_H200")[0]
                sets = _input_sets(case, "cuda")
                variants = {"library": unified_variant(library.launch_unified_keys_rows, profile),
                            "fused": unified_variant(ukr_fused.launch_unified_keys_rows, profile)}
                row = {"case": case.label, "profile": profile.short(), "bytes": sets[0].bytes_moved,
                       **check_and_time(variants, sets, reference.unified_attention(**sets[0].kwargs), runs=5)}
                print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
                f.write(json.dumps(row) + "\n")
                del sets
                torch.cuda.empty_cache()
