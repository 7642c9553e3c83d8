"""v25 call 2: the sparse Gluon kernels after v25's edits (the tree's ops/sparse_exchange.py and
ops/sparse_keys_rows.py) against v24's (build/v25/exch_old.py, krows_old.py: the two files at commit
694c107, made importable from build/v25 by
  git show 694c107:pagedattn/ops/sparse_exchange.py | sed -e 's/^from \.\.profiles/from pagedattn.profiles/' \
    -e 's/^from \.common/from pagedattn.ops.common/' -e 's/^from \.sparse /from pagedattn.ops.sparse /'
and likewise for sparse_keys_rows.py, whose `from .sparse_exchange` becomes `from exch_old`), same
profiles, on the sparse bench's cases, both page types. Graph timing over rotated inputs, three
alternated runs each, min; outputs NaN-prefilled and checked against float64. Call 1 ran an earlier
form of this script: the FP8 cases only, the exchange kernel's n32 (and, at 520 rows, n16) profile
old against new (then only K's conversion without the byte permute), and the dispatcher's BF16
and FP8 profiles. Usage: exch_ab.py OUT.jsonl"""
import json, sys
import torch
from pagedattn import reference, workloads
from pagedattn.bench import _input_sets
from pagedattn.ops import sparse_exchange as new_exch, sparse_keys_rows as new_krows
from pagedattn.profiles.types import LaunchProfile
from pagedattn.timing import time_calls

sys.path.insert(0, "build/v25")
import exch_old as old_exch  # noqa: E402
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
        profs = [N32] if shape.rows > 520 else [N32, N16]
        for prof in profs:
            variants[f"old/{prof.short()}"] = launcher(old_exch.launch_sparse_exchange, prof, scale)
            variants[f"new/{prof.short()}"] = launcher(new_exch.launch_sparse_exchange, prof, scale)
        if shape.kv_dtype == "fp8" and shape.group <= 8:
            variants[f"old/{KROWS.short()}"] = launcher(old_krows.launch_sparse_keys_rows, KROWS, scale)
            variants[f"new/{KROWS.short()}"] = launcher(new_krows.launch_sparse_keys_rows, KROWS, scale)
        sets = _input_sets(case, "cuda")
        expected = reference.sparse_attention(**sets[0].kwargs)
        rel = {}
        for name, fn in variants.items():
            o = torch.full_like(sets[0].kwargs["q"], float("nan"))
            fn(sets[0].kwargs, o)
            torch.cuda.synchronize()
            rel[name] = (reference.rel_l2(o, expected), bool(o.isnan().any()))
        times = {n: [] for n in variants}
        for _ in range(3):
            for name, fn in variants.items():
                times[name].append(time_calls([lambda s=s, fn=fn, o=torch.empty_like(s.kwargs["q"]): fn(s.kwargs, o)
                                               for s in sets]))
        ms = {n: min(t) for n, t in times.items()}
        row = {"case": case.label, "ms": ms, "ms_all": times, "rel_l2_nan": rel,
               "best_old": min(v for n, v in ms.items() if n.startswith("old")),
               "best_new": min(v for n, v in ms.items() if n.startswith("new"))}
        print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
        f.write(json.dumps(row) + "\n")
        del sets
        torch.cuda.empty_cache()
