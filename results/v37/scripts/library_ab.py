"""v37 call 2: item 1's kernels (the library: a tile's slots and page indices without its index, the 16-row
one-warpgroup keys-as-rows build capped at 168 registers) against the same kernels before it (build/v37 ukr_before.py,
vw_before.py) and against ukr_scores_first.py (the library with a step's Q.K^T issued before the next tile's copies),
same profiles (the H200 table's, `previous_profiles`: the entries' hashes are stale), on the bench cases that run the
two Gluon unified kernels: the FP8 long request at q=1 and q=4 and FP8 MTP verify on the keys-as-rows kernel, BF16
MTP verify on the wgmma kernel (`ab_probe.time_unified_case`: NaN-prefilled outputs checked against float64,
alternated graph timing, min of 7 rounds).
Call 5 (`--bounds`): the library of commit 17a3894 (build/v37 ukr_now.py, vw_now.py) against its bounds probes
(ukr_bounds.py, vw_bounds.py: a tile's usable rows by one compare per row against one bound).
Call 6 (`--only TEXT`): the cases whose label contains TEXT alone.
Usage: library_ab.py OUT.jsonl [--bounds] [--only TEXT]"""
import sys

sys.path.insert(0, "scripts")
from ab_probe import time_unified_case, unified_variant  # noqa: E402
import torch  # noqa: E402
import ukr_before  # noqa: E402
import ukr_bounds  # noqa: E402
import ukr_now  # noqa: E402
import ukr_scores_first  # noqa: E402
import vw_before  # noqa: E402
import vw_bounds  # noqa: E402
import vw_now  # noqa: E402
from pagedattn import workloads  # noqa: E402
from pagedattn.ops import unified_keys_rows, verify_wgmma  # noqa: E402
from pagedattn.profiles.tables import previous_profiles  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402

KEYS_ROWS = ("q=1 kv=131072 16q/1kv d256 fp8", "q=4 kv=131072 16q/1kv d256 fp8", "kv=32768 16q/1kv d256 fp8",
             "kv=32768 32q/2kv d256 fp8", "kv=70000 16q/1kv d256 fp8")
WGMMA = ("kv=32768 16q/1kv d256 bf16", "kv=70000 16q/1kv d256 bf16", "kv=32768 32q/2kv d256 bf16")


def launchers(label: str, bounds: bool) -> dict:
    """The variants' launchers for the case labelled `label` (None: not timed); `bounds`: call 5's."""
    if any(name in label for name in KEYS_ROWS):
        if bounds:
            return {"library": ukr_now.launch_unified_keys_rows, "bounds": ukr_bounds.launch_unified_keys_rows}
        return {"library": unified_keys_rows.launch_unified_keys_rows, "before": ukr_before.launch_unified_keys_rows,
                "scores_first": ukr_scores_first.launch_unified_keys_rows}
    if any(name in label for name in WGMMA):
        if bounds:
            return {"library": vw_now.launch_verify_wgmma, "bounds": vw_bounds.launch_verify_wgmma}
        return {"library": verify_wgmma.launch_verify_wgmma, "before": vw_before.launch_verify_wgmma}
    return None


if __name__ == "__main__":
    with open(sys.argv[1], "w") as f:
        for name in ("long-request", "mtp-verify"):
            for case in workloads.get_workload(name).cases:
                chosen = launchers(case.label, "--bounds" in sys.argv)
                only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
                if chosen and only in case.label:
                    profile = previous_profiles(case_shape_key(case), "NVIDIA_H200")[0]
                    time_unified_case(case, {k: unified_variant(launch, profile) for k, launch in chosen.items()}, f,
                                      runs=7)
                    torch.cuda.empty_cache()
