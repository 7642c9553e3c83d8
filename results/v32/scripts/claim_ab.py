"""v32 call 1: the unified keys-as-rows kernel with its tiles claimed (build/v32/ukr_claim.py, from
make_variants.py) against the library's, same profiles (the H200 table's, `profiles.tables.previous_profiles`), on
the bench cases that run this kernel: the FP8 long request at q=1 and q=4 and FP8 MTP verify. NaN-prefilled outputs
checked against float64 before and again after the timing's graph replays (the counters must be back at 0 after
every call), alternated graph timing, min of 7 rounds (`ab_probe.check_and_time`).
Usage: claim_ab.py OUT.jsonl"""
import sys
sys.path.insert(0, "scripts")
sys.path.insert(0, "build/v32")
from ab_probe import check_and_time, checked_output, unified_variant  # noqa: E402
import json  # noqa: E402
import torch  # noqa: E402
from pagedattn import reference, workloads  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.ops import unified_keys_rows as library  # noqa: E402
from pagedattn.profiles.tables import previous_profiles  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402
import ukr_claim  # noqa: E402

CASES = ("q=1 kv=131072 16q/1kv d256 fp8", "q=4 kv=131072 16q/1kv d256 fp8", "kv=32768 16q/1kv d256 fp8",
         "kv=32768 32q/2kv d256 fp8", "kv=70000 16q/1kv d256 fp8")

with open(sys.argv[1], "w") as f:
    for name in ("long-request", "mtp-verify"):
        for case in workloads.get_workload(name).cases:
            if any(label in case.label for label in CASES):
                profile = previous_profiles(case_shape_key(case), "NVIDIA_H200")[0]
                sets = _input_sets(case, "cuda")
                variants = {"library": unified_variant(library.launch_unified_keys_rows, profile),
                            "claim": unified_variant(ukr_claim.launch_unified_keys_rows, profile)}
                expected = reference.unified_attention(**sets[0].kwargs)
                row = {"case": case.label, "profile": profile.short(), "bytes": sets[0].bytes_moved,
                       **check_and_time(variants, sets, expected, runs=7)}
                row["claim_after_replays"] = checked_output(variants["claim"], sets[0].kwargs, expected)
                row["counters_nonzero"] = int((ukr_claim._COUNTERS[torch.device("cuda", 0)] != 0).sum()) \
                    if torch.device("cuda", 0) in ukr_claim._COUNTERS else None
                row["ratio"] = row["ms"]["claim"] / row["ms"]["library"]
                print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
                f.write(json.dumps(row) + "\n")
                del sets
                torch.cuda.empty_cache()
