"""v32 call 3: the mixed batch's partitioned launches (`select.partitioned_plan`) against one launch of the
same first profile over the whole batch, and each of the two launches alone (their rows only: the other
launch's rows stay NaN or zero, so their checks are expected to fail), on the mixed-batch bench cases and
the H200 table of call 2. NaN-prefilled outputs checked against float64, alternated graph timing, min of 7
rounds (`ab_probe.check_and_time`).
Usage: partition_ab.py OUT.jsonl"""
import sys
sys.path.insert(0, "scripts")
from ab_probe import check_and_time  # noqa: E402
import json  # noqa: E402
import torch  # noqa: E402
import pagedattn  # noqa: E402
from pagedattn import api, reference, workloads  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.ops.unified import launch_unified_attention  # noqa: E402


def planned(p):
    """One launch of the plan, alone."""
    def call(kw, out):
        launch_unified_attention(kw["q"], kw["k_cache"], kw["v_cache"], out, kw["cu_seqlens_q"], kw["seq_lens"],
                                 kw["block_table"], softmax_scale=kw["q"].shape[-1] ** -0.5, k_scale=kw["k_scale"],
                                 v_scale=kw["v_scale"], sliding_window=None, softcap=None, sinks=None,
                                 profile=p.selection.profile, queries_above=p.queries_above,
                                 queries_upto=p.queries_upto)
    return call


with open(sys.argv[1], "w") as f:
    for case in workloads.get_workload("mixed-batch").cases:
        sets = _input_sets(case, "cuda")
        kw0 = sets[0].kwargs
        plan = api.choose_unified_plan(kw0["q"], kw0["k_cache"], kw0["block_table"], kw0["max_seqlen_q"],
                                       kw0["max_seqlen_k"])
        first = plan[0].selection.profile
        variants = {"plan": lambda kw, out: pagedattn.unified_attention(**kw, out=out),
                    "one launch": lambda kw, out: pagedattn.unified_attention(**kw, out=out, profile=first)}
        if len(plan) == 2:
            variants |= {"long alone": planned(plan[0]), "short alone": planned(plan[1])}
        expected = reference.unified_attention(**kw0)
        row = {"case": case.label, "plan": [(p.selection.profile.short(), p.selection.source, p.queries_above,
                                             p.queries_upto) for p in plan],
               "bytes": sets[0].bytes_moved, "flops": sets[0].flops, **check_and_time(variants, sets, expected, runs=7)}
        print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
        f.write(json.dumps(row) + "\n")
        del sets
        torch.cuda.empty_cache()
