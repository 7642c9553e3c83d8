"""Is sparse prefill bound by its L2 gathers? Two measurements on the bench's 8,192-row sparse cases.

(A) Gather ceilings: kernels with the sparse kernel's grid that gather the same resolved token ids
    (`resolve_selections`) and the same K/V rows and do no softmax, one summing the rows in
    registers (plain loads, below), one multiplying them like the attention loop (cp.async
    pipelined: `bench.gather_products`, with the caches' own dtype, FP8 operands included). The
    fastest of them is the gather ceiling of that access pattern: gathered bytes / its time. The
    bench now measures the multiplying one per sparse case (`bench.sparse_gather_ceiling`, FP8
    pages as 16-bit values).
(B) The Triton sparse kernel (ops/sparse.py) with the H200 table's Triton profiles of v10
    (16-bit: m16/n32/s1/w2/st2/ahead, FP8: m16/n64/s1/w2/st2) under ptxas register caps
    (`maxnreg`), which would fit more programs per SM.

Graph timing over rotated input sets (`pagedattn.timing`); rel-L2 against float64 for (B). Used for
perf-notes v11 (`results/v11/c1-gather-probe.*`):

    PYTHONPATH=. python3 scripts/sparse_gather_probe.py OUT.json
"""
import json, sys
import torch
import triton
import triton.language as tl
import pagedattn
from pagedattn import reference, workloads
from pagedattn.profiles.types import LaunchProfile
from pagedattn.bench import _input_sets, gather_products, gathered_tile
from pagedattn.ops import sparse as sp
from pagedattn.ops.sparse import resolve_selections
from pagedattn.timing import time_calls


@triton.jit
def gather_sum_kernel(k_ptr, v_ptr, tokens_ptr, out_ptr, topk, num_kv, stride_block, stride_slot, stride_head,
                      PAGE: tl.constexpr, HEAD: tl.constexpr, TILE_N: tl.constexpr):
    """The gathered rows summed in registers (plain loads)."""
    row = tl.program_id(0).to(tl.int64)
    kv_head = tl.program_id(1)
    acc = tl.zeros([HEAD], tl.float32)
    for j0 in range(0, topk, TILE_N):
        k, v = gathered_tile(k_ptr, v_ptr, tokens_ptr, row, kv_head, j0, topk, stride_block, stride_slot, stride_head,
                             PAGE, HEAD, HEAD, TILE_N)
        acc += tl.sum(k.to(tl.float32) + v.to(tl.float32), 0)
    tl.store(out_ptr + (row * num_kv + kv_head) * HEAD + tl.arange(0, HEAD), acc)


def resolved_tokens(kw):
    return resolve_selections(kw["indices"], None, kw["block_table"], kw["token_to_req"], kw["k_cache"].shape[0],
                              kw["k_cache"].shape[1])


class Capped:
    """A Triton kernel whose launches carry maxnreg."""
    def __init__(self, kernel, maxnreg):
        self.kernel, self.maxnreg = kernel, maxnreg

    def __getitem__(self, grid):
        launch = self.kernel[grid]
        return lambda *a, **kw: launch(*a, **kw, maxnreg=self.maxnreg)


ORIG = sp.sparse_attention_kernel
CASES = ["rows=8192 24q/2kv d256 bf16", "rows=8192 12q/1kv d256 bf16", "rows=8192 3q/1kv d256 bf16",
         "rows=8192 24q/2kv d256 fp8", "rows=8192 12q/1kv d256 fp8"]
GATHER = [("gather_sum", n, w, st) for n, w, st in ((32, 4, 1), (32, 8, 1), (64, 4, 1), (64, 8, 1), (32, 4, 3), (64, 8, 3))]
GATHER += [("gather_dot", n, w, st) for n, w, st in ((32, 2, 2), (32, 4, 3), (64, 4, 2))]
rows_out = []
wl = workloads.get_workload("sparse-prefill")
for label in CASES:
    case = next(c for c in wl.cases if c.label == label)
    sets = _input_sets(case, "cuda")
    kw0 = sets[0].kwargs
    k_cache = kw0["k_cache"]
    toks = [resolved_tokens(s.kwargs) for s in sets]
    gathered = int((toks[0] >= 0).sum()) * 2 * k_cache.shape[3] * k_cache.element_size() * k_cache.shape[2]
    row = {"case": label, "gathered_bytes": gathered, "gather": {}, "kernel": {}}
    rows, topk = toks[0].shape
    nkv = k_cache.shape[2]
    for kern, n, w, st in GATHER:
        name = f"{kern}/n{n}/w{w}/st{st}"
        outs = [torch.empty(rows, nkv, k_cache.shape[3], device="cuda") for _ in sets]
        def call(s, t, o, kern=kern, n=n, w=w, st=st):
            kc, vc = s.kwargs["k_cache"], s.kwargs["v_cache"]
            if kern == "gather_dot":
                gather_products(kc, vc, t, o, n, w, st)
                return
            gather_sum_kernel[(rows, nkv)](kc, vc, t, o, topk, nkv, kc.stride(0), kc.stride(1), kc.stride(2),
                                           PAGE=kc.shape[1], HEAD=kc.shape[3], TILE_N=n, num_warps=w, num_stages=st)
        try:
            ms = time_calls([lambda s=s, t=t, o=o: call(s, t, o) for s, t, o in zip(sets, toks, outs)])
            row["gather"][name] = {"ms": ms, "tbps": gathered / ms / 1e9}
            print(f"{label:32s} {name:28s} {ms:7.3f} ms {gathered / ms / 1e9:6.2f} TB/s", flush=True)
        except Exception as exc:
            row["gather"][name] = {"error": str(exc)[:300]}
            print(f"{label:32s} {name:28s} ERROR {str(exc)[:150]}", flush=True)
    expected = reference.sparse_attention(**kw0)
    prof = LaunchProfile.from_short("m16/n64/s1/w2/st2" if "fp8" in label else "m16/n32/s1/w2/st2/ahead")
    for cap in (None, 168, 128):
        sp.sparse_attention_kernel = ORIG if cap is None else Capped(ORIG, cap)
        outs = [torch.full_like(s.kwargs["q"], float("nan")) for s in sets]
        try:
            pagedattn.sparse_attention(**kw0, out=outs[0], profile=prof)
            err = reference.rel_l2(outs[0], expected)
            ms = time_calls([lambda s=s, o=o: pagedattn.sparse_attention(**s.kwargs, out=o, profile=prof) for s, o in zip(sets, outs)])
            row["kernel"][str(cap)] = {"profile": prof.short(), "ms": ms, "tbps": gathered / ms / 1e9, "rel_l2": err}
            print(f"{label:32s} kernel {prof.short():28s} maxnreg {cap} {ms:7.3f} ms {gathered / ms / 1e9:6.2f} TB/s rel-L2 {err:.1e}", flush=True)
        except Exception as exc:
            row["kernel"][str(cap)] = {"error": str(exc)[:300]}
            print(f"{label:32s} kernel maxnreg {cap} ERROR {str(exc)[:150]}", flush=True)
    sp.sparse_attention_kernel = ORIG
    rows_out.append(row)
    del sets, toks, outs, expected
    torch.cuda.empty_cache()
json.dump(rows_out, open(sys.argv[1], "w"), indent=1)
