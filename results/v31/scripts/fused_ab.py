"""v31 calls 1 and 5: the unified keys-as-rows kernel with its split merge done by its own last programs
(build/v31/ukr_fused_*.py, from make_variants.py) against the library's kernel + merge kernel, same profiles (the
H200 table's, `profiles.tables.previous_profiles`), on the bench cases that run this kernel: the FP8 long request
at q=1 and q=4 and FP8 MTP verify at 32,768 keys (call 5: --long, the long requests alone, and v2). NaN-prefilled
outputs checked against float64, alternated graph timing, min of 5 rounds (`ab_probe.check_and_time`).
Call 1 ran ukr_fused_v1.py, then named ukr_fused.py.
Usage: fused_ab.py OUT.jsonl [--long]"""
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
import ukr_fused_v1  # noqa: E402
import ukr_fused_v2  # noqa: E402
import ukr_fused_v2_keep  # noqa: E402

LONG = "--long" in sys.argv
CASES = ("q=1 kv=131072 16q/1kv d256 fp8", "q=4 kv=131072 16q/1kv d256 fp8") + (() if LONG else (
    "kv=32768 16q/1kv d256 fp8", "kv=32768 32q/2kv d256 fp8"))
MODULES = {"fused": ukr_fused_v1} if not LONG else {"fused-v1": ukr_fused_v1, "fused-v2": ukr_fused_v2,
                                                     "fused-v2-keep": ukr_fused_v2_keep}

with open(sys.argv[1], "w") as f:
    for name in ("long-request",) + (() if LONG else ("mtp-verify",)):
        for case in workloads.get_workload(name).cases:
            if any(label in case.label for label in CASES):
                profile = previous_profiles(case_shape_key(case), "NVIDIA_H200")[0]
                sets = _input_sets(case, "cuda")
                variants = {"library": unified_variant(library.launch_unified_keys_rows, profile),
                            **{name: unified_variant(m.launch_unified_keys_rows, profile) for name, m in MODULES.items()}}
                row = {"case": case.label, "profile": profile.short(), "bytes": sets[0].bytes_moved,
                       **check_and_time(variants, sets, reference.unified_attention(**sets[0].kwargs), runs=5)}
                print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
                f.write(json.dumps(row) + "\n")
                del sets
                torch.cuda.empty_cache()
