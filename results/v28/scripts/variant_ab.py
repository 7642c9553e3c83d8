"""v28: unified keys-as-rows kernel files against each other, the same profiles (the first of main's
H200 table entries for the case's bucket, `profiles.tables.previous_profiles`), on the bench's cases
that run this kernel (FP8 MTP verify at both head layouts, the FP8 long request at q=1 and q=4), or
on the cases whose label contains FILTER. Each file is a copy of pagedattn/ops/unified_keys_rows.py
with its relative imports made absolute, in build/v28 (results/v28/scripts/make_variants.py builds
them), or the tree's ("tree").
`scripts/ab_probe.check_and_time`: NaN-prefilled outputs checked against float64, alternated graph
timing, min of 3 runs.
A MODULE@stN runs the profile with N ring stages instead (cases whose profile has 4 warps only).
Call 2: build/v28/ukr_main.py (main at 9972be3), ukr_two_chains.py (Q.K^T's two e4m3 terms on two
accumulators, added after their wait), ukr_hi_only.py (q's high term alone: a timing probe, its
results are off by design). Call 3: ukr_fence_first.py (the fence before wgmma's reads moved ahead
of the next tile's copies and page-table read), ukr_copies_late.py (the next tile's copies and
page-table read issued after the softmax's fences and barriers, before P.V), each also at 3 stages.
Usage: variant_ab.py OUT.jsonl [--filter FILTER] MODULE[@stN] ..."""
import dataclasses, importlib, sys
sys.path.insert(0, "scripts")
sys.path.insert(0, "build/v28")
from ab_probe import time_unified_case, unified_variant  # noqa: E402
from pagedattn import workloads  # noqa: E402
from pagedattn.profiles.tables import previous_profiles  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402

out, args = sys.argv[1], sys.argv[2:]
label_filter = ""
if args[0] == "--filter":
    label_filter, args = args[1], args[2:]
modules = {name: importlib.import_module("pagedattn.ops.unified_keys_rows" if name == "tree" else name.split("@")[0])
           for name in args}


def stages(name, prof):
    """The profile a variant runs: the table's, or with the ring depth its name asks for."""
    return dataclasses.replace(prof, num_stages=int(name.split("@st")[1])) if "@st" in name else prof


with open(out, "w") as f:
    for wl in ("long-request", "mtp-verify"):
        for case in workloads.get_workload(wl).cases:
            if case.shape.kv_dtype != "fp8" or label_filter not in case.label:
                continue
            prof = previous_profiles(case_shape_key(case), "NVIDIA_H200")[0]
            variants = {f"{name}/{stages(name, prof).short()}": unified_variant(mod.launch_unified_keys_rows,
                                                                                 stages(name, prof))
                        for name, mod in modules.items() if prof.num_warps == 4 or "@st" not in name}
            time_unified_case(case, variants, f)
