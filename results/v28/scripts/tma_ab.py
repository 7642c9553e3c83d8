"""v28 call 1: the unified keys-as-rows kernel's K/V pages copied by TMA, against main's cp.async ring.
Three variants, the same profiles (the first of main's H200 table entries for the case's bucket,
`profiles.tables.previous_profiles`), on the bench's cases that run this kernel (FP8 MTP verify at
both head layouts, the FP8 long request at q=1 and q=4):
  main  build/v28/ukr_main.py: main's pagedattn/ops/unified_keys_rows.py, relative imports made absolute
        (git show main:pagedattn/ops/unified_keys_rows.py | sed, as results/v27/scripts/vote_ab.py says);
  tma   build/v28/ukr_tma.py: every warp issues the pages' TMA boxes at the top of a step, one barrier
        per slot (Triton 3.6 puts a CTA barrier between two TMA copies into one allocation or onto one
        mbarrier: 16 per 64-key tile);
  copy_warp  the tree: a copy warp (Gluon warp_specialize) reads the page table and issues the boxes
        as soon as a slot is free; the 4 (or 8) warps of the softmax only wait on the slot's mbarrier.
`scripts/ab_probe.check_and_time`: NaN-prefilled outputs checked against float64, alternated graph
timing, min of 3 runs. Call 1 ran it on branch wip/tma-pages (490702e), whose tree is the copy-warp
kernel; on main "copy_warp" would time main's kernel. Usage: tma_ab.py OUT.jsonl"""
import sys
sys.path.insert(0, "scripts")
sys.path.insert(0, "build/v28")
import ukr_main, ukr_tma  # noqa: E402
from ab_probe import time_unified_case, unified_variant  # noqa: E402
from pagedattn import workloads  # noqa: E402
from pagedattn.ops import unified_keys_rows as tree  # noqa: E402
from pagedattn.profiles.tables import previous_profiles  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402

with open(sys.argv[1], "w") as f:
    for wl in ("long-request", "mtp-verify"):
        for case in workloads.get_workload(wl).cases:
            if case.shape.kv_dtype != "fp8":
                continue
            prof = previous_profiles(case_shape_key(case), "NVIDIA_H200")[0]
            variants = {f"{name}/{prof.short()}": unified_variant(mod.launch_unified_keys_rows, prof)
                        for name, mod in (("main", ukr_main), ("tma", ukr_tma), ("copy_warp", tree))}
            time_unified_case(case, variants, f)
