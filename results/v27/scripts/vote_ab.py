"""v27 call 1: the unified keys-as-rows kernel with its rescale decision by the warp vote (the tree,
branch wip/unified-keys-rows-vote) against main's five-shuffle tree (build/v27/ukr_main.py: main's
pagedattn/ops/unified_keys_rows.py with its relative imports made absolute:
  git show main:pagedattn/ops/unified_keys_rows.py | sed -e 's/^from \\.\\.profiles/from pagedattn.profiles/' \\
    -e 's/^from \\.common/from pagedattn.ops.common/' -e 's/^from \\.gluon_common/from pagedattn.ops.gluon_common/' \\
    -e 's/^from \\.verify_wgmma/from pagedattn.ops.verify_wgmma/'
), same profiles (main's H200 table, whose hash the tree no longer matches), on the bench's cases
that run this kernel: FP8 MTP verify at both head layouts and the FP8 long request.
`scripts/ab_probe.check_and_time`: NaN-prefilled outputs checked against float64, alternated graph
timing, min of 3 runs. Call 2 ran it as `vote_ab.py OUT.jsonl ukr_vote vote direct`: the tree (the
epilogue's direct stores) against build/v27/ukr_vote.py (call 1's file, made the same way from
commit e54e5db). Usage: vote_ab.py OUT.jsonl [OLD_MODULE OLD_NAME NEW_NAME]"""
import importlib, json, sys
sys.path.insert(0, "scripts")
sys.path.insert(0, "build/v27")
from ab_probe import time_unified_case, unified_variant  # noqa: E402
from pagedattn import workloads  # noqa: E402
from pagedattn.ops import unified_keys_rows as new  # noqa: E402
from pagedattn.profiles.types import LaunchProfile  # noqa: E402

old_module, old_name, new_name = sys.argv[2:5] if len(sys.argv) > 2 else ("ukr_main", "main", "vote")
old = importlib.import_module(old_module)

TABLE = json.load(open("pagedattn/profiles/tables/NVIDIA_H200.json"))["entries"]


def table_profile(shape):
    """main's table entry for the case (the bench's cases are buckets)."""
    for e in TABLE:
        k = e["key"]
        if (k["kernel"], k["kv_dtype"], k["num_seqs"], k["max_seqlen_q"], k["num_kv_heads"], k["kv_len"]) == \
                ("unified", shape.kv_dtype, len(shape.kv_lens), shape.max_seqlen_q, shape.num_kv_heads, max(shape.kv_lens)):
            return LaunchProfile.from_dict(e["profile"])
    raise KeyError(shape)


with open(sys.argv[1], "w") as f:
    for wl in ("long-request", "mtp-verify"):
        for case in workloads.get_workload(wl).cases:
            if case.shape.kv_dtype != "fp8":
                continue
            prof = table_profile(case.shape)
            variants = {f"{old_name}/{prof.short()}": unified_variant(old.launch_unified_keys_rows, prof),
                        f"{new_name}/{prof.short()}": unified_variant(new.launch_unified_keys_rows, prof)}
            time_unified_case(case, variants, f)
