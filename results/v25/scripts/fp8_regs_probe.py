"""v25 call 5 (a probe, not in the library): the exchange kernel with P's row sums on the matrix unit
(the tree's ops/sparse_exchange.py with results/v25/scripts/rowsums.patch applied: 212 registers at
FP8 32-key tiles, 198 with maxnreg=200 and no stack: five programs per SM instead of four) against
commit 46ec151's (build/v26/exch_main.py: that file with its relative imports made absolute; 226
registers, 204 with maxnreg=204 and 8 bytes of stack), on the sparse bench's FP8 cases and TP1 / TP2
BF16 at the table's profiles. Graph timing over rotated inputs, three alternated runs each, min;
outputs NaN-prefilled, checked against float64. Usage: fp8_regs_probe.py OUT.jsonl"""
import json, sys
import torch
from pagedattn import reference, workloads
from pagedattn.bench import _input_sets
from pagedattn.ops import sparse_exchange as branch
from pagedattn.ops.sparse import prepare_sparse_call
from pagedattn.profiles.types import EXCHANGE_WARPS, LaunchProfile
from pagedattn.timing import time_calls

sys.path.insert(0, "build/v26")
import exch_main as main  # noqa: E402

N32 = LaunchProfile(16, 32, 1, 2, 2, shared_exchange=True)
N16 = LaunchProfile(16, 16, 1, 2, 2, shared_exchange=True)


def launcher(mod, prof, scale, maxnreg=None):
    extra = {"maxnreg": maxnreg} if maxnreg else {}

    def call(kw, o):
        q, k, v = kw["q"], kw["k_cache"], kw["v_cache"]
        c = prepare_sparse_call(q, k, o, kw["indices"], kw["block_table"], kw["token_to_req"], None, kw["k_scale"],
                                kw["v_scale"], 1, q.shape[2])
        k_is_t, v_is_t = c.scales_as_tensors
        mod.sparse_exchange_kernel[(q.shape[0], k.shape[2], 1)](
            *c.kernel_args(q, k, v, o, None, scale, 1), NUM_Q_HEADS=q.shape[1], GROUP=q.shape[1] // k.shape[2],
            D=q.shape[2], PAGE=k.shape[1], TILE_N=prof.tile_n, STAGES=prof.num_stages, SPLIT=False, HAS_COUNTS=False,
            KV_FP8=k.dtype == torch.float8_e4m3fn, K_SCALE_TENSOR=k_is_t, V_SCALE_TENSOR=v_is_t,
            DENSE_PAGES=mod.dense_pages(k, v), num_warps=EXCHANGE_WARPS, **extra)
    return call


wl = workloads.get_workload("sparse-prefill")
with open(sys.argv[1], "w") as f:
    for case in wl.cases:
        shape = case.shape
        if shape.kv_dtype == "bf16" and shape.group < 12:
            continue
        scale = shape.head_size ** -0.5
        prof = N32 if shape.kv_dtype == "fp8" or shape.rows > 520 else N16
        variants = {"main": launcher(main, prof, scale), "rowsums": launcher(branch, prof, scale)}
        if shape.kv_dtype == "fp8":
            variants["main/maxnreg204"] = launcher(main, prof, scale, 204)
            variants["rowsums/maxnreg200"] = launcher(branch, prof, scale, 200)
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
        row = {"case": case.label, "profile": prof.short(), "ms": {n: min(t) for n, t in times.items()}, "ms_all": times,
               "rel_l2_nan": rel}
        print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
        f.write(json.dumps(row) + "\n")
        del sets
        torch.cuda.empty_cache()
