"""v34 call 5: item 4's partition rule against v33's on calls of few sequences without a table, 32q/8kv D=128, BF16
and FP8 pages: v33's untuned plan (`select.partition` took a split short launch from the table only, so a call whose
untuned short launch split ran in one launch; a call the tokens prove has no short sequence still had a short
part) against v34's (`select.untuned_launch_plan`). Cases: one 512-query chunk and 7 decodes over 32,768 keys; two
1,024-query chunks, 6 decodes over 16,384 keys and 4 verifies of 4 over 8,192; three chunks of 2,048 / 1,024 / 1,024
queries over 8,192 keys (no short sequence, which the tokens cannot prove: v34 adds an empty split short launch).
NaN-prefilled outputs checked against float64, alternated graph timing over the bench's rotated inputs, min of 5.
Usage: partition_rule_ab.py OUT.jsonl"""
import json
import sys

sys.path.insert(0, "scripts")
from ab_probe import check_and_time  # noqa: E402
import torch  # noqa: E402
from pagedattn import api, reference  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.device import DeviceInfo  # noqa: E402
from pagedattn.profiles import select  # noqa: E402
from pagedattn.profiles.types import VERIFY_MAX_QUERIES, ShapeKey, query_class  # noqa: E402
from pagedattn.workloads import Case, UnifiedShape  # noqa: E402

SEQS = {
    "1 chunk 512 + 7 decodes @32768": [(512, 512)] + [(1, 32768)] * 7,
    "2 chunks 1024 + 6 decodes @16384 + 4 verifies @8192": [(1024, 4096)] * 2 + [(1, 16384)] * 6 + [(4, 8192)] * 4,
    "3 chunks 2048/1024/1024 @8192, no short": [(2048, 8192), (1024, 8192), (1024, 8192)],
}


def v33_plan(key: ShapeKey, device: DeviceInfo):
    """v33's `untuned_launch_plan`: a short part for every prefill call of several sequences, in one pass
    (a split untuned short launch kept the call in one launch)."""
    chosen = select.untuned_selection(key, device)
    short_key = ShapeKey(**(key.bucket() | {
        "query_class": query_class(VERIFY_MAX_QUERIES), "max_seqlen_q": VERIFY_MAX_QUERIES,
        "num_tokens": min(key.num_tokens, key.num_seqs * VERIFY_MAX_QUERIES),
        "score_mods": key.score_mods, "aligned_cache": key.aligned_cache}))
    short = select.untuned_selection(short_key, device)
    if short.profile.num_splits > 1:
        return (select.PlannedLaunch(chosen),)
    return select.partition(key, chosen, short)


def variant(plan):
    def call(kw, out):
        api.launch_unified_plan(plan, **kw, out=out)
    return call


device = DeviceInfo.current()
with open(sys.argv[1], "w") as f:
    for label, seqs in SEQS.items():
        for kv_dtype in ("bf16", "fp8"):
            case = Case(f"{label} {kv_dtype}", UnifiedShape(tuple(n for n, _ in seqs), tuple(k for _, k in seqs), 32, 8,
                                                            128, kv_dtype=kv_dtype))
            sets = _input_sets(case, "cuda")
            kw = sets[0].kwargs
            key = api.unified_shape_key(kw["q"], kw["k_cache"], kw["block_table"], kw["max_seqlen_q"], kw["max_seqlen_k"])
            plans = {"v33": v33_plan(key, device), "v34": select.untuned_launch_plan(key, device)}
            row = {"case": case.label, "bytes": sets[0].bytes_moved,
                   "plans": {k: [f"{p.selection.profile.short()} q>{p.queries_above} q<={p.queries_upto}" for p in plan]
                             for k, plan in plans.items()},
                   **check_and_time({k: variant(plan) for k, plan in plans.items()}, sets,
                                    reference.unified_attention(**kw), runs=5)}
            row["ratio"] = row["ms"]["v34"] / row["ms"]["v33"]
            print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
            f.write(json.dumps(row) + "\n")
            del sets
            torch.cuda.empty_cache()
