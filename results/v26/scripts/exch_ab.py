"""v26 call 1: the sparse Gluon kernels after v26's edits (the tree: token ids read without bounds
from a pre-pass buffer padded with -1, and the exchange kernel's growth decision by a warp vote)
against commit af25846's (build/v26/sparse_old.py, exch_old.py, krows_old.py: the three files at
that commit with their relative imports made absolute:
  git show af25846:pagedattn/ops/sparse_exchange.py | sed -e 's/^from \\.\\.profiles/from pagedattn.profiles/' \\
    -e 's/^from \\.common/from pagedattn.ops.common/' -e 's/^from \\.gluon_common/from pagedattn.ops.gluon_common/' \\
    -e 's/^from \\.sparse /from sparse_old /'
likewise sparse.py, and sparse_keys_rows.py with `from .sparse_exchange` -> `from exch_old`) and against
exch_vote.py (exch_old.py with the vote only: the tree's `_warp_votes` and its three lines), same
profiles, on the sparse bench's cases, both page types. `scripts/ab_probe.check_and_time`: outputs
NaN-prefilled and checked against float64, three alternated graph-timed runs, min.
Usage: exch_ab.py OUT.jsonl"""
import json, sys
import torch
sys.path.insert(0, "scripts")
sys.path.insert(0, "build/v26")
from ab_probe import check_and_time  # noqa: E402
from pagedattn import reference, workloads  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.ops import sparse_exchange as new_exch, sparse_keys_rows as new_krows  # noqa: E402
from pagedattn.profiles.types import LaunchProfile  # noqa: E402
import exch_old as old_exch  # noqa: E402
import exch_vote as vote_exch  # noqa: E402
import krows_old as old_krows  # noqa: E402

N32 = LaunchProfile(16, 32, 1, 2, 2, shared_exchange=True)
N16 = LaunchProfile(16, 16, 1, 2, 2, shared_exchange=True)
KROWS = LaunchProfile(16, 64, 1, 4, 2, keys_as_rows=True)


def launcher(launch, prof, scale):
    def call(kw, o):
        launch(kw["q"], kw["k_cache"], kw["v_cache"], o, kw["indices"], kw["block_table"], kw["token_to_req"], None,
               softmax_scale=scale, k_scale=kw["k_scale"], v_scale=kw["v_scale"], profile=prof)
    return call


wl = workloads.get_workload("sparse-prefill")
with open(sys.argv[1], "w") as f:
    for case in wl.cases:
        shape = case.shape
        scale = shape.head_size ** -0.5
        variants = {}
        for prof in [N32] if shape.rows > 520 else [N32, N16]:
            variants[f"old/{prof.short()}"] = launcher(old_exch.launch_sparse_exchange, prof, scale)
            if shape.kv_dtype == "fp8":
                variants[f"vote/{prof.short()}"] = launcher(vote_exch.launch_sparse_exchange, prof, scale)
            variants[f"new/{prof.short()}"] = launcher(new_exch.launch_sparse_exchange, prof, scale)
        if shape.kv_dtype == "fp8" and shape.group <= 8:
            variants[f"old/{KROWS.short()}"] = launcher(old_krows.launch_sparse_keys_rows, KROWS, scale)
            variants[f"new/{KROWS.short()}"] = launcher(new_krows.launch_sparse_keys_rows, KROWS, scale)
        sets = _input_sets(case, "cuda")
        row = {"case": case.label, **check_and_time(variants, sets, reference.sparse_attention(**sets[0].kwargs))}
        print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
        f.write(json.dumps(row) + "\n")
        del sets
        torch.cuda.empty_cache()
