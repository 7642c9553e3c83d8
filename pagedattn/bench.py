"""`pagedattn bench` and `pagedattn check`: named workloads x providers against measured ceilings.

What is measured, per workload case (`pagedattn.workloads.WORKLOADS`) and provider:
  * correctness first: the provider writes into an output pre-filled with NaN and is compared with
    the float64 reference (`pagedattn.reference`); rel-L2 >= 1e-2 (or any NaN) is a FAIL and a
    failing provider is not timed;
  * time: `pagedattn.timing.time_calls` (do_bench medians after warm-up), cycling through
    `timing.rotation_count` input sets (different seeds) when one set is smaller than 3x L2;
    `pagedattn` is timed twice and the spread of the two is the noise bound of the run;
  * achieved TB/s over `Inputs.bytes_moved` (each KV byte the call must read once, gathered bytes
    for sparse, Q and out once) and TFLOP/s over `Inputs.flops` (2 x multiply-adds of the visible
    QK^T and PV products): both come from the workload builders, never from a provider.

Ceilings are measured first in the same process (GPU only) with `time_calls` medians:
  * HBM read: a streaming Triton kernel in this module (one block of 8K-32K float32 per program,
    128-bit loads, many waves of programs over a max(1 GiB, 16 x L2) buffer; `READ_VARIANTS`
    lists the block sizes and warps tried); the best variant is the ceiling. `torch.sum` over the
    same buffer is reported too: it reads slower, so a reduction is not the ceiling;
  * device-to-device copy (bytes read + written) and a bf16 matmul (8192^3);
  * per sparse case, the gather ceiling of its own access pattern (`sparse_gather_ceiling`): the
    sparse calls read their gathered bytes mostly from L2 (17-67 MB caches), so % of HBM says
    little there; a kernel that gathers the same K/V rows through the same resolved token ids and
    feeds them to the matrix unit with no softmax (`GATHER_VARIANTS`, the fastest counts) bounds
    what an attention kernel can reach on that case (perf-notes v11 item 1: 9.6-9.8 TB/s on the
    H200). FP8 pages are gathered as 16-bit values of half the head size: the same bytes, the
    same rows, no FP8 operand path in the bound. It runs one program per (row, KV head) without
    splits, so it bounds calls that fill the GPU (prefill-like rows); with fewer programs than the
    GPU holds (the 64-row decode cases) a split attention kernel can pass it.
Under the Triton interpreter (no GPU) the tiny cases run, correctness is checked, ceilings are
skipped and timings mean nothing.

Providers are adapters over the same inputs (`PROVIDERS`): `prepare(kernel, kwargs)` does the
untimed set-up (plans, masks, index tables) and returns a `Prepared` whose `run(out)` is the
timed work, or raises `Unsupported` with the reason.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import importlib
import importlib.util
import json
import math
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from . import api, reference
from .device import DeviceInfo
from .ops.common import load_tokens, split_position
from .ops.sparse import resolve_selections
from .profiles.select import ALL_QUERIES, untuned_launch_plan, untuned_selection
from .profiles.types import cdiv
from .timing import rotation_count, time_calls, timings_meaningful
from .workloads import WORKLOADS

TOLERANCE = 1e-2
# (elements per program, warps) of the streaming-read ceiling; the best of them is the ceiling.
# Loads carry no cache modifier: `.cg` compiles to LDG.E.128.STRONG.GPU on sm90, and the version
# of this kernel that used it read 3.2 TB/s on the H200 where torch.sum read 4.1.
READ_VARIANTS = ((8192, 4), (8192, 8), (16384, 8), (32768, 16))
# (keys per tile, warps, stages) of the sparse gather ceiling; the fastest is the case's ceiling
GATHER_VARIANTS = ((32, 4, 3), (32, 2, 2), (64, 4, 2))
GATHER_BUDGET_BYTES = 1 << 30  # torch-sdpa sparse: K+V gathered per chunk of rows
CPU_PROVIDERS = ("pagedattn", "pagedattn-default", "torch-sdpa")
SCHEMA_VERSION = 1


def _note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- ceilings


@triton.jit
def _stream_read_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    """Program p sums block p of x (plain 128-bit loads; the partial sums keep the loads alive)."""
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))


def stream_read(x: torch.Tensor, partials: torch.Tensor, block: int = READ_VARIANTS[0][0],
                num_warps: int = READ_VARIANTS[0][1]) -> torch.Tensor:
    """Read float32 `x` once, one `block`-element block per program; returns the per-program sums
    (`partials` holds cdiv(len(x), block) of them)."""
    if x.dtype != torch.float32 or x.dim() != 1:
        raise ValueError("stream_read needs a 1-D float32 tensor")
    if partials.numel() != cdiv(x.numel(), block):
        raise ValueError(f"stream_read needs {cdiv(x.numel(), block)} partials for block {block}, got {partials.numel()}")
    _stream_read_kernel[(partials.numel(),)](x, partials, x.numel(), BLOCK=block, num_warps=num_warps)
    return partials


def measure_ceilings(device: str, read_bytes: int, matmul_n: int) -> dict:
    """HBM read (streaming kernel and torch.sum), copy and bf16 matmul rates on `device`."""
    x = torch.rand(read_bytes // 4, device=device)
    nbytes = x.numel() * 4
    by_variant = {}
    for block, warps in READ_VARIANTS:
        partials = torch.empty(cdiv(x.numel(), block), device=device)
        call = functools.partial(stream_read, x, partials, block, warps)
        by_variant[f"{block}x{warps}w"] = nbytes / time_calls([call]) / 1e9
    torch_sum = nbytes / time_calls([x.sum]) / 1e9
    y = torch.empty_like(x)
    copy = 2 * nbytes / time_calls([functools.partial(y.copy_, x)]) / 1e9
    del x, y
    a = torch.randn(matmul_n, matmul_n, device=device, dtype=torch.bfloat16)
    b = torch.randn(matmul_n, matmul_n, device=device, dtype=torch.bfloat16)
    matmul = 2 * matmul_n**3 / time_calls([functools.partial(torch.matmul, a, b)]) / 1e9
    return {
        "hbm_read_tbps": max(by_variant.values()),
        "hbm_read_tbps_by_variant": by_variant,
        "torch_sum_tbps": torch_sum,
        "copy_tbps": copy,
        "matmul_bf16_tflops": matmul,
        "read_buffer_bytes": nbytes,
        "matmul_n": matmul_n,
    }


@triton.jit
def gathered_tile(k_ptr, v_ptr, tokens_ptr, row, kv_head, j0, topk, stride_block, stride_slot, stride_head,
                  PAGE: tl.constexpr, HEAD: tl.constexpr, HEAD_PAD: tl.constexpr, TILE_N: tl.constexpr):
    """K and V rows [TILE_N, HEAD_PAD] of slots j0.. of a row's resolved token ids (-1: not read),
    loaded as the sparse attention kernel loads them."""
    j = j0 + tl.arange(0, TILE_N)
    token = tl.load(tokens_ptr + row * topk + j, mask=j < topk, other=-1)
    ok = token >= 0
    phys, slot = split_position(token, PAGE)
    offs_d = tl.arange(0, HEAD_PAD)
    k = load_tokens(k_ptr, phys, slot, ok, stride_block, stride_slot, kv_head * stride_head, offs_d, HEAD, HEAD_PAD)
    v = load_tokens(v_ptr, phys, slot, ok, stride_block, stride_slot, kv_head * stride_head, offs_d, HEAD, HEAD_PAD)
    return k, v


@triton.jit(do_not_specialize=["num_rows"])
def _gather_products_kernel(k_ptr, v_ptr, tokens_ptr, out_ptr, num_rows, topk, num_kv, stride_block, stride_slot,
                            stride_head, PAGE: tl.constexpr, HEAD: tl.constexpr, HEAD_PAD: tl.constexpr,
                            TILE_N: tl.constexpr):
    """Program (row, KV head): every tile of the row's selections gathered and multiplied as the
    attention loop does it, S = Q K^T with a constant 16-row Q, then acc += S V, without the
    softmax; out[row, kv_head] = the column sums of acc (what keeps the work alive)."""
    row = tl.program_id(0).to(tl.int64)
    kv_head = tl.program_id(1)
    q = tl.full([16, HEAD_PAD], 1.0 / HEAD, tl.float32).to(k_ptr.dtype.element_ty)
    acc = tl.zeros([16, HEAD_PAD], tl.float32)
    for j0 in range(0, topk, TILE_N):
        k, v = gathered_tile(k_ptr, v_ptr, tokens_ptr, row, kv_head, j0, topk, stride_block, stride_slot, stride_head,
                             PAGE, HEAD, HEAD_PAD, TILE_N)
        s = tl.dot(q, tl.trans(k))
        acc = tl.dot(s.to(k.dtype), v, acc)
    offs_d = tl.arange(0, HEAD_PAD)
    tl.store(out_ptr + (row * num_kv + kv_head) * HEAD + offs_d, tl.sum(acc, 0), mask=offs_d < HEAD)


def gather_products(k_cache: torch.Tensor, v_cache: torch.Tensor, tokens: torch.Tensor, out: torch.Tensor,
                    tile_n: int = GATHER_VARIANTS[0][0], num_warps: int = GATHER_VARIANTS[0][1],
                    num_stages: int = GATHER_VARIANTS[0][2]) -> torch.Tensor:
    """`_gather_products_kernel` over `tokens` [rows, topk] (resolved ids); out [rows, kv_heads, head]
    float32. The products run in the caches' dtype (FP8 pages: FP8 operands, the path perf-notes v11
    item 1 measured; `sparse_gather_ceiling` passes them as 16-bit values instead)."""
    if k_cache.stride() != v_cache.stride():
        raise ValueError("gather_products needs K and V caches of the same strides")
    rows, topk = tokens.shape
    _, page, num_kv, head = k_cache.shape
    _gather_products_kernel[(rows, num_kv)](
        k_cache, v_cache, tokens, out, rows, topk, num_kv, k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        PAGE=page, HEAD=head, HEAD_PAD=triton.next_power_of_2(head), TILE_N=tile_n,
        num_warps=num_warps, num_stages=num_stages)
    return out


def sparse_gather_ceiling(input_sets: list) -> float:
    """Milliseconds of the fastest `GATHER_VARIANTS` gather over a sparse case's rotated input sets
    (each set's selections resolved first, as the library does; FP8 pages viewed as 16-bit values
    of half the head size), timed as the providers are (`time_calls`)."""
    calls_by_variant = {variant: [] for variant in GATHER_VARIANTS}
    for inputs in input_sets:
        kw = inputs.kwargs
        k_cache, v_cache = kw["k_cache"], kw["v_cache"]
        tokens = resolve_selections(kw["indices"], kw.get("counts"), kw["block_table"], kw["token_to_req"],
                                    k_cache.shape[0], k_cache.shape[1])
        if k_cache.element_size() == 1:
            k_cache, v_cache = k_cache.view(torch.bfloat16), v_cache.view(torch.bfloat16)
        out = torch.empty(tokens.shape[0], k_cache.shape[2], k_cache.shape[3], device=tokens.device)
        for variant in GATHER_VARIANTS:
            calls_by_variant[variant].append(functools.partial(gather_products, k_cache, v_cache, tokens, out, *variant))
    return min(time_calls(calls) for calls in calls_by_variant.values())


# --------------------------------------------------------------------------- providers


class Unsupported(Exception):
    """A provider cannot run this case; the message says why."""


@dataclass
class Prepared:
    run: Callable[[torch.Tensor], object]  # the timed work: writes the result into `out`
    profile: dict | None = None  # pagedattn providers: the launch profile used and its source


@dataclass(frozen=True)
class Provider:
    name: str
    prepare: Callable[[str, dict], Prepared]
    missing: Callable[[], str | None] = lambda: None  # why it cannot run on this machine at all


def _selection_dict(selection) -> dict:
    return {"profile": selection.profile.to_dict(), "short": selection.profile.short(),
            "source": selection.source, "detail": selection.detail}


def _query_range(planned) -> str:
    """The query counts a planned launch runs: "q>8", "q<=4", "4<q<=8"."""
    if planned.queries_upto == ALL_QUERIES:
        return f"q>{planned.queries_above}"
    return f"{planned.queries_above}<q<={planned.queries_upto}" if planned.queries_above else f"q<={planned.queries_upto}"


def _plan_dict(plan) -> dict:
    """A unified call's launches: the first one's selection, and with several launches (a partitioned
    mixed batch) every profile in `short`, each with the query counts it runs, and every source."""
    first = _selection_dict(plan[0].selection)
    if len(plan) == 1:
        return first
    parts = [(p.selection, _query_range(p)) for p in plan]
    return first | {"short": " + ".join(f"{s.profile.short()} ({queries})" for s, queries in parts),
                    "detail": "; ".join(f"{queries}: {s.source} {s.detail}".strip() for s, queries in parts)}


def _api_function(kernel: str):
    return api.unified_attention if kernel == "unified" else api.sparse_attention


def _shape_key(kernel: str, kw: dict):
    if kernel == "unified":
        return api.unified_shape_key(kw["q"], kw["k_cache"], kw["block_table"], kw["max_seqlen_q"],
                                     kw.get("max_seqlen_k"), api.has_score_mods(**kw))
    return api.sparse_shape_key(kw["q"], kw["k_cache"], kw["indices"])


def _prepare_pagedattn(kernel: str, kw: dict) -> Prepared:
    if kernel == "unified":
        record = _plan_dict(api.choose_unified_plan(kw["q"], kw["k_cache"], kw["block_table"], kw["max_seqlen_q"],
                                                    kw.get("max_seqlen_k"), score_mods=api.has_score_mods(**kw)))
    else:
        record = _selection_dict(api.choose_sparse_profile(kw["q"], kw["k_cache"], kw["indices"]))
    fn = _api_function(kernel)
    return Prepared(lambda out: fn(**kw, out=out), record)


def _prepare_pagedattn_default(kernel: str, kw: dict) -> Prepared:
    """pagedattn as a GPU of this arch without a tuned table runs it (`untuned_selection`; a unified
    call in the launches of `select.untuned_launch_plan`)."""
    key = _shape_key(kernel, kw)
    q = kw["q"]
    device = DeviceInfo.current(q.device.index if q.is_cuda else None)
    if kernel == "unified":
        plan = untuned_launch_plan(key, device)
        return Prepared(lambda out: api.launch_unified_plan(plan, out=out, **kw),
                        _plan_dict(plan) | {"source": f"{plan[0].selection.source} (no table)"})
    selection = untuned_selection(key, device)
    profile = selection.profile
    return Prepared(lambda out: api.sparse_attention(**kw, out=out, profile=profile),
                    _selection_dict(selection) | {"source": f"{selection.source} (no table)"})


def _scales(kw: dict) -> tuple[float, float, float]:
    """(softmax scale, softmax scale x k_scale, v_scale): FP8 pages are upcast, not rescaled; the
    k_scale goes into the softmax scale and the v_scale multiplies the output."""
    head_size = kw["q"].shape[2]
    softmax_scale = kw.get("softmax_scale") or head_size**-0.5
    k_scale, v_scale = reference.scale_value(kw.get("k_scale")), reference.scale_value(kw.get("v_scale"))
    return softmax_scale, softmax_scale * k_scale, v_scale


def _gather(cache: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """cache[index], moving FP8 elements as bytes (indexing kernels need not support FP8)."""
    if cache.element_size() == 1:
        return cache.view(torch.uint8)[index].view(cache.dtype)
    return cache[index]


def _dense_kv(cache: torch.Tensor, pages: torch.Tensor, length: int, dtype: torch.dtype) -> torch.Tensor:
    """Pages [b, P] of a paged cache as dense [b, num_kv_heads, length, head_size] in `dtype`."""
    return _gather(cache, pages).flatten(1, 2)[:, :length].transpose(1, 2).to(dtype)


def _window_mask(n: int, length: int, window: int, device) -> torch.Tensor:
    """[n, length] bool: query i (at length - n + i) sees keys within `window` up to itself."""
    qpos = length - n + torch.arange(n, device=device)[:, None]
    keys = torch.arange(length, device=device)[None, :]
    return (keys <= qpos) & (keys > qpos - window)


def _prepare_sdpa(kernel: str, kw: dict) -> Prepared:
    if kernel == "sparse":
        return _prepare_sdpa_sparse(kw)
    for name in ("softcap", "sinks"):
        if kw.get(name) is not None:
            raise Unsupported(f"scaled_dot_product_attention has no {name}")
    from torch.nn.attention.bias import causal_lower_right

    q, k_cache, v_cache = kw["q"], kw["k_cache"], kw["v_cache"]
    _, scale, v_scale = _scales(kw)
    window = kw.get("sliding_window")
    block_size = k_cache.shape[1]
    cu, lens = kw["cu_seqlens_q"].tolist(), kw["seq_lens"].tolist()
    groups: dict[tuple[int, int], list[int]] = {}
    for seq, length in enumerate(lens):
        if cu[seq + 1] > cu[seq]:
            groups.setdefault((cu[seq + 1] - cu[seq], length), []).append(seq)
    buckets = []  # sequences of equal (query length, KV length) form one dense batch
    for (n, length), seqs in groups.items():
        tokens = torch.tensor([cu[s] for s in seqs], device=q.device)[:, None] + torch.arange(n, device=q.device)
        pages = kw["block_table"][torch.tensor(seqs, device=q.device), : cdiv(length, block_size)].long()
        if window is not None:
            mask = _window_mask(n, length, window, q.device)
        else:
            mask = None if n == 1 else causal_lower_right(n, length)
        buckets.append((length, tokens, pages, mask))
    num_kv_heads = k_cache.shape[2]
    gqa = q.shape[1] != num_kv_heads

    def run(out: torch.Tensor) -> None:
        for length, tokens, pages, mask in buckets:
            k = _dense_kv(k_cache, pages, length, q.dtype)
            v = _dense_kv(v_cache, pages, length, q.dtype)
            qb = q[tokens]  # [b, n, Hq, D]
            if qb.shape[1] == 1:  # one token: its group's heads become the query rows of their KV head
                o = F.scaled_dot_product_attention(qb.unflatten(2, (num_kv_heads, -1))[:, 0], k, v,
                                                   attn_mask=mask, scale=scale).flatten(1, 2)[:, None]
            else:
                o = F.scaled_dot_product_attention(qb.transpose(1, 2), k, v, attn_mask=mask, scale=scale,
                                                   enable_gqa=gqa).transpose(1, 2)
            out[tokens] = (o * v_scale).to(out.dtype)

    return Prepared(run)


def _prepare_sdpa_sparse(kw: dict) -> Prepared:
    q, k_cache, v_cache = kw["q"], kw["k_cache"], kw["v_cache"]
    indices, table, token_to_req, counts = kw["indices"], kw["block_table"], kw["token_to_req"], kw.get("counts")
    _, scale, v_scale = _scales(kw)
    num_blocks, block_size, num_kv_heads, head_size = k_cache.shape
    rows, topk = indices.shape
    chunk = max(1, GATHER_BUDGET_BYTES // (2 * topk * num_kv_heads * head_size * q.element_size()))
    slots = torch.arange(topk, device=q.device)

    def run(out: torch.Tensor) -> None:
        k_flat, v_flat = k_cache.flatten(0, 1), v_cache.flatten(0, 1)  # [num_blocks * block_size, Hkv, D]
        for lo in range(0, rows, chunk):
            hi = min(rows, lo + chunk)
            idx = indices[lo:hi].long()
            page = idx.clamp(min=0) // block_size
            valid = (idx >= 0) & (page < table.shape[1])
            phys = table[token_to_req[lo:hi, None].long(), page.clamp(max=table.shape[1] - 1)].long()
            valid &= (phys >= 0) & (phys < num_blocks)
            if counts is not None:
                valid &= slots[None, :] < counts[lo:hi, None]
            token = phys.clamp(0, num_blocks - 1) * block_size + idx.clamp(min=0) % block_size  # [r, topk]
            k = _gather(k_flat, token).transpose(1, 2).to(q.dtype)  # [r, Hkv, topk, D]
            v = _gather(v_flat, token).transpose(1, 2).to(q.dtype)
            qg = q[lo:hi].unflatten(1, (num_kv_heads, -1))  # [r, Hkv, group, D]: the group as query rows
            o = F.scaled_dot_product_attention(qg, k, v, attn_mask=valid[:, None, None, :], scale=scale)
            # a row with no valid entry gives 0: SDPA's CPU path returns NaN for it, its CUDA kernels the mean of V
            o = torch.where(valid.any(dim=1)[:, None, None], torch.nan_to_num(o.flatten(1, 2), nan=0.0), 0.0)
            out[lo:hi] = (o * v_scale).to(out.dtype)

    return Prepared(run)


def _flex_missing() -> str | None:
    if not timings_meaningful():
        return "FlexAttention is compiled by torch.compile for a CUDA GPU; there is none here"
    if importlib.util.find_spec("torch.nn.attention.flex_attention") is None:
        return f"torch {torch.__version__} has no torch.nn.attention.flex_attention"
    return None


@functools.lru_cache(maxsize=1)
def _compiled_flex():
    import torch._dynamo
    from torch.nn.attention.flex_attention import flex_attention

    # one compilation per case shape: past dynamo's default limit (8) it would silently run eagerly
    limit = "recompile_limit" if hasattr(torch._dynamo.config, "recompile_limit") else "cache_size_limit"
    setattr(torch._dynamo.config, limit, 256)
    return torch.compile(flex_attention, dynamic=False)


def flex_unified(kw: dict, attention: Callable) -> Prepared:
    """FlexAttention over the batch padded to [batch, heads, max query / KV length, D], with a
    block mask for the bottom-right causal alignment, sequence lengths and window."""
    from torch.nn.attention.flex_attention import create_block_mask

    if kw.get("sinks") is not None:
        raise Unsupported("sinks are not expressed as a FlexAttention score_mod here")
    q, k_cache, v_cache = kw["q"], kw["k_cache"], kw["v_cache"]
    _, scale, v_scale = _scales(kw)
    device = q.device
    cu = kw["cu_seqlens_q"].long()
    seq_lens = kw["seq_lens"].long()
    q_lens = cu[1:] - cu[:-1]
    batch, max_q = seq_lens.shape[0], max(1, int(q_lens.max()))
    kv_len = cdiv(int(seq_lens.max()), k_cache.shape[1]) * k_cache.shape[1]
    pages = kw["block_table"][:, : kv_len // k_cache.shape[1]].long().clamp(min=0)
    steps = torch.arange(max_q, device=device)
    present = steps[None, :] < q_lens[:, None]  # [batch, max_q]: real query tokens
    tokens = (cu[:-1, None] + steps).clamp(max=q.shape[0] - 1)
    window, softcap = kw.get("sliding_window"), kw.get("softcap")

    def mask_mod(b, h, q_idx, kv_idx):
        pos = seq_lens[b] - q_lens[b] + q_idx
        keep = (kv_idx <= pos) & (q_idx < q_lens[b])
        return keep & (kv_idx > pos - window) if window is not None else keep

    def softcap_mod(score, b, h, q_idx, kv_idx):
        return softcap * torch.tanh(score / softcap)

    block_mask = create_block_mask(mask_mod, batch, None, max_q, kv_len, device=device)
    gqa = q.shape[1] != k_cache.shape[2]

    def run(out: torch.Tensor) -> None:
        k = _dense_kv(k_cache, pages, kv_len, q.dtype)
        v = _dense_kv(v_cache, pages, kv_len, q.dtype)
        o = attention(q[tokens].transpose(1, 2), k, v, score_mod=softcap_mod if softcap else None,
                      block_mask=block_mask, scale=scale, enable_gqa=gqa)
        out[tokens[present]] = (o.transpose(1, 2)[present] * v_scale).to(out.dtype)

    return Prepared(run)


def _prepare_flex(kernel: str, kw: dict) -> Prepared:
    if kernel == "sparse":
        raise Unsupported("per-row top-k selections have no block structure for a FlexAttention block mask")
    try:
        prepared = flex_unified(kw, _compiled_flex())
        prepared.run(torch.empty_like(kw["q"]))  # compiles for this shape
    except Unsupported:
        raise
    except Exception as exc:  # compile errors surface on the first call
        raise Unsupported(f"FlexAttention did not compile: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
    return prepared


def _module_missing(module: str, hint: str) -> Callable[[], str | None]:
    def missing() -> str | None:
        if importlib.util.find_spec(module) is None:
            return f"not installed ({hint})"
        return None if timings_meaningful() else "needs a CUDA GPU"

    return missing


def _flashinfer_pages(kw: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """FlashInfer's CSR page table: (indptr, page ids, tokens in each sequence's last page)."""
    block_size = kw["k_cache"].shape[1]
    lens = kw["seq_lens"].long()
    pages = (lens + block_size - 1) // block_size
    table = kw["block_table"]
    ids = torch.cat([table[s, : int(n)] for s, n in enumerate(pages.tolist())])
    indptr = torch.cat([pages.new_zeros(1), pages.cumsum(0)]).int()
    return indptr, ids.int(), (lens - (pages - 1) * block_size).int()


def _prepare_flashinfer(kernel: str, kw: dict) -> Prepared:
    """Untested here (no FlashInfer on the development machines): written from its public docs."""
    if kernel == "sparse":
        raise Unsupported("FlashInfer has no per-row top-k paged kernel in its public wrappers")
    if kw.get("sinks") is not None:
        raise Unsupported("sinks are not passed to FlashInfer's paged wrappers here")
    import flashinfer

    q, k_cache, v_cache = kw["q"], kw["k_cache"], kw["v_cache"]
    softmax_scale, _, _ = _scales(kw)
    fp8 = k_cache.dtype == torch.float8_e4m3fn
    k_scale = reference.scale_value(kw.get("k_scale")) if fp8 else None
    v_scale = reference.scale_value(kw.get("v_scale")) if fp8 else None
    indptr, ids, last = _flashinfer_pages(kw)
    workspace = torch.zeros(256 << 20, dtype=torch.uint8, device=q.device)
    shape = (q.shape[1], k_cache.shape[2], q.shape[2], k_cache.shape[1])
    common = dict(window_left=(kw["sliding_window"] - 1) if kw.get("sliding_window") else -1,
                  logits_soft_cap=kw.get("softcap"), sm_scale=softmax_scale, q_data_type=q.dtype,
                  kv_data_type=k_cache.dtype)
    if kw["max_seqlen_q"] == 1:
        wrapper = flashinfer.BatchDecodeWithPagedKVCacheWrapper(workspace, "NHD")
        wrapper.plan(indptr, ids, last, *shape, pos_encoding_mode="NONE", **common)
    else:
        wrapper = flashinfer.BatchPrefillWithPagedKVCacheWrapper(workspace, "NHD", backend="fa2")
        wrapper.plan(kw["cu_seqlens_q"], indptr, ids, last, *shape, causal=True, **common)
    return Prepared(lambda out: wrapper.run(q, (k_cache, v_cache), k_scale=k_scale, v_scale=v_scale, out=out))


def _vllm_unified():
    for module in ("vllm.v1.attention.ops.triton_unified_attention", "vllm.attention.ops.triton_unified_attention"):
        try:
            return importlib.import_module(module).unified_attention
        except (ImportError, AttributeError):
            continue
    raise Unsupported("this vLLM has no triton_unified_attention.unified_attention")


def _prepare_vllm(kernel: str, kw: dict) -> Prepared:
    """Untested here (no vLLM on the development machines): written from vLLM's source."""
    if kernel == "sparse":
        raise Unsupported("vLLM's sparse GQA kernel is not part of a released public API")
    fn = _vllm_unified()
    q = kw["q"]
    softmax_scale, _, _ = _scales(kw)
    window = kw.get("sliding_window")

    def descale(name: str) -> torch.Tensor:  # the kernel loads its scales through pointers
        return torch.tensor([reference.scale_value(kw.get(name))], dtype=torch.float32, device=q.device)

    args = dict(q=q, k=kw["k_cache"], v=kw["v_cache"], cu_seqlens_q=kw["cu_seqlens_q"],
                max_seqlen_q=kw["max_seqlen_q"], seqused_k=kw["seq_lens"],
                max_seqlen_k=kw.get("max_seqlen_k") or int(kw["seq_lens"].max()), softmax_scale=softmax_scale,
                causal=True, window_size=(window - 1, 0) if window else (-1, -1), block_table=kw["block_table"],
                softcap=kw.get("softcap") or 0.0, q_descale=None, k_descale=descale("k_scale"),
                v_descale=descale("v_scale"), sinks=kw.get("sinks"))
    return Prepared(lambda out: fn(out=out, **args))


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider("pagedattn", _prepare_pagedattn),
        Provider("pagedattn-default", _prepare_pagedattn_default),
        Provider("torch-sdpa", _prepare_sdpa),
        Provider("torch-flex", _prepare_flex, _flex_missing),
        Provider("flashinfer", _prepare_flashinfer, _module_missing("flashinfer", "pip install flashinfer-python")),
        Provider("vllm", _prepare_vllm, _module_missing("vllm", "pip install vllm")),
    )
}


# --------------------------------------------------------------------------- measuring cases


def _reference(kernel: str, kw: dict) -> torch.Tensor:
    fn = reference.unified_attention if kernel == "unified" else reference.sparse_attention
    return fn(**kw)


def _cases(workload, tiny: bool):
    return workload.tiny if tiny else workload.cases


def _input_sets(case, device: str) -> list:
    """Input set 0, plus sets with other seeds until together they span 3x L2 (GPU only)."""
    first = case.build(device, seed=0)
    count = rotation_count(first.bytes_moved, DeviceInfo.current()) if timings_meaningful() else 1
    return [first] + [case.build(device, seed=seed) for seed in range(1, count)]


def measure_case(workload, case, providers: list[str], device: str, ceilings: dict | None, progress) -> list[dict]:
    """Check and time every provider on one case; returns one result dict per provider."""
    sets = _input_sets(case, device)
    kernel = workload.kernel
    expected = _reference(kernel, sets[0].kwargs)
    results = []
    for name in providers:
        progress(name)
        row = {"workload": workload.name, "case": case.label, "kernel": kernel, "provider": name,
               "status": "ok", "reason": None, "rel_l2": None, "time_ms": None, "bytes_moved": sets[0].bytes_moved,
               "flops": sets[0].flops, "input_sets": len(sets), "profile": None}
        results.append(row)
        try:
            prepared = [PROVIDERS[name].prepare(kernel, s.kwargs) for s in sets]
            out = torch.full_like(sets[0].kwargs["q"], float("nan"))
            prepared[0].run(out)
            row["rel_l2"] = reference.rel_l2(out, expected)
        except Unsupported as exc:
            row.update(status="skip", reason=str(exc))
            _note(f"  skip {name} on {workload.name} / {case.label}: {exc}")
            continue
        except Exception as exc:
            row.update(status="FAIL", reason=f"{type(exc).__name__}: {exc}")
        else:
            row["profile"] = prepared[0].profile
            if not row["rel_l2"] < TOLERANCE:
                row.update(status="FAIL", reason=f"rel-L2 {row['rel_l2']:.3e} >= {TOLERANCE:g}")
        if row["status"] == "FAIL":
            _note(f"  FAIL {name} on {workload.name} / {case.label}: {row['reason']}")
            continue
        outs = [torch.empty_like(s.kwargs["q"]) for s in sets]
        calls = [functools.partial(p.run, o) for p, o in zip(prepared, outs)]
        row["time_ms"] = time_calls(calls)
        if name == "pagedattn":
            row["repeat_ms"] = time_calls(calls)
            row["spread"] = abs(row["repeat_ms"] - row["time_ms"]) / row["time_ms"]
        row["tbps"] = row["bytes_moved"] / row["time_ms"] / 1e9
        row["tflops"] = row["flops"] / row["time_ms"] / 1e9
        if ceilings:
            row["pct_hbm"] = 100 * row["tbps"] / ceilings["hbm_read_tbps"]
            row["pct_matmul"] = 100 * row["tflops"] / ceilings["matmul_bf16_tflops"]
    timed = {r["provider"]: r["time_ms"] for r in results if r["time_ms"]}
    gather_ms = sparse_gather_ceiling(sets) if ceilings and kernel == "sparse" and timed else None
    for row in results:
        if row["time_ms"]:
            row["speedup_vs"] = {other: t / row["time_ms"] for other, t in timed.items() if other != row["provider"]}
            if gather_ms:
                row["gather_ceiling_tbps"] = row["bytes_moved"] / gather_ms / 1e9
                row["pct_gather"] = 100 * gather_ms / row["time_ms"]
    return results


# --------------------------------------------------------------------------- report


def _fmt(value, spec: str) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def _gain_column(row: dict, results: list[dict]) -> str:
    """This provider's time over pagedattn's (on the pagedattn row: its own spread); '~' = noise."""
    if row["provider"] == "pagedattn":
        return f"±{100 * row['spread']:.0f}%" if row.get("spread") is not None else "-"
    ours = next((r for r in results if r["provider"] == "pagedattn" and r["case"] == row["case"]
                 and r["workload"] == row["workload"]), None)
    if not row.get("time_ms") or not ours or not ours.get("time_ms"):
        return "-"
    gain = row["time_ms"] / ours["time_ms"]
    return f"{gain:.2f}x" + ("~" if abs(gain - 1) <= ours.get("spread", 0.0) else "")


def format_table(report: dict) -> str:
    results = report["results"]
    header = (f"{'workload':<15} {'case':<34} {'provider':<18} {'status':<6} {'ms':>9} {'TB/s':>6} {'%HBM':>5} "
              f"{'%gath':>5} {'TFLOP/s':>8} {'%MMA':>5} {'vs-sdpa':>8} {'pa-gain':>8} {'rel-L2':>8}")
    lines = [header, "-" * len(header)]
    previous = None
    for row in results:
        if previous is not None and row["workload"] != previous:
            lines.append("")
        previous = row["workload"]
        vs_sdpa = (row.get("speedup_vs") or {}).get("torch-sdpa")
        lines.append(
            f"{row['workload']:<15} {row['case'][:34]:<34} {row['provider']:<18} {row['status']:<6} "
            f"{_fmt(row.get('time_ms'), '.4f'):>9} {_fmt(row.get('tbps'), '.2f'):>6} "
            f"{_fmt(row.get('pct_hbm'), '.0f'):>5} {_fmt(row.get('pct_gather'), '.0f'):>5} {_fmt(row.get('tflops'), '.1f'):>8} "
            f"{_fmt(row.get('pct_matmul'), '.1f'):>5} {_fmt(vs_sdpa, '.2f') + ('x' if vs_sdpa else ''):>8} "
            f"{_gain_column(row, results):>8} {_fmt(row.get('rel_l2'), '.1e'):>8}"
        )
    failures = [r for r in results if r["status"] == "FAIL"]
    for row in failures:
        lines.append(f"FAIL {row['provider']} on {row['workload']} / {row['case']}: {row['reason']}")
    lines.append("vs-sdpa: torch-sdpa time / this time.  pa-gain: this time / pagedattn time "
                 "(pagedattn row: spread of two timings; '~' = within it).  %gath (sparse): % of the case's "
                 "gather ceiling.")
    if not report["timings_meaningful"]:
        lines.append("NOTE: no GPU: kernels ran under the Triton interpreter; timings mean nothing, "
                     "correctness was checked.")
    return "\n".join(lines)


def format_ceilings(ceilings: dict) -> str:
    waves = ", ".join(f"{k} {v:.2f}" for k, v in ceilings["hbm_read_tbps_by_variant"].items())
    return "\n".join([
        f"Ceilings (buffer {ceilings['read_buffer_bytes'] / 2**30:.1f} GiB):",
        f"  HBM read, streaming Triton kernel : {ceilings['hbm_read_tbps']:.2f} TB/s ({waves})",
        f"  HBM read, torch.sum               : {ceilings['torch_sum_tbps']:.2f} TB/s",
        f"  device copy (read + write)        : {ceilings['copy_tbps']:.2f} TB/s",
        f"  bf16 matmul {ceilings['matmul_n']}^3             : {ceilings['matmul_bf16_tflops']:.0f} TFLOP/s",
    ])


def write_plot(report: dict, path: str) -> bool:
    """Per-workload bars of % of the HBM-read ceiling (TB/s without ceilings), one colour per provider."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        _note(f"matplotlib is not installed: no plot written to {path}. Write the JSON with --json and run "
              f"`pagedattn bench --from-json JSON --plot {path}` where matplotlib is installed.")
        return False
    key, label = ("pct_hbm", "% of HBM read ceiling") if report.get("ceilings") else ("tbps", "TB/s")
    providers = list(dict.fromkeys(r["provider"] for r in report["results"]))
    workloads = list(dict.fromkeys(r["workload"] for r in report["results"]))
    fig, axes = plt.subplots(len(workloads), 1, figsize=(12, 3.2 * len(workloads)), squeeze=False)
    width = 0.8 / max(1, len(providers))
    for ax, workload in zip(axes[:, 0], workloads):
        rows = [r for r in report["results"] if r["workload"] == workload]
        cases = list(dict.fromkeys(r["case"] for r in rows))
        for p_index, provider in enumerate(providers):
            values = {r["case"]: r.get(key) or 0.0 for r in rows if r["provider"] == provider}
            xs = [c_index + (p_index - (len(providers) - 1) / 2) * width for c_index in range(len(cases))]
            ax.bar(xs, [values.get(c, 0.0) for c in cases], width, label=provider, color=f"C{p_index}")
        ax.set_xticks(range(len(cases)), cases, rotation=20, ha="right", fontsize=7)
        ax.set_title(workload)
        ax.set_ylabel(label)
    axes[0, 0].legend(ncol=len(providers), fontsize=8)
    fig.suptitle(f"{report['device'].get('name', '')} — {report['date']}")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig.get_figheight()))  # room for the title
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def _environment() -> dict:
    device = dict(DeviceInfo.current().__dict__)
    if torch.cuda.is_available():
        device["torch_name"] = torch.cuda.get_device_name()
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join(sys.argv), "python": platform.python_version(), "torch": torch.__version__,
            "triton": triton.__version__, "cuda": torch.version.cuda, "device": device,
            "timings_meaningful": timings_meaningful()}


def _selected_workloads(names: list[str] | None) -> list:
    return [WORKLOADS[n] for n in (names or WORKLOADS)]


# --------------------------------------------------------------------------- commands


def _progress(position: str, label: str, start: float) -> Callable[[str], None]:
    def show(provider: str) -> None:  # one stderr line as each provider starts on a case
        _note(f"[{position} {time.perf_counter() - start:6.1f}s] {label}: {provider}")

    return show


def run_bench(args: argparse.Namespace) -> int:
    if args.from_json:
        reports = [json.loads(Path(path).read_text()) for path in args.from_json]
        report = reports[0] | {"results": [r for rep in reports for r in rep["results"]]}
        return _finish(report, args)
    unknown = [p for p in args.providers or () if p not in PROVIDERS]
    if unknown:
        _note(f"unknown provider(s) {', '.join(unknown)}; known: {', '.join(PROVIDERS)}")
        return 2
    gpu = timings_meaningful()
    tiny = args.tiny or not gpu
    device = "cuda" if gpu else "cpu"
    if not gpu:
        _note("No GPU: running the tiny cases under the Triton interpreter; timings mean nothing here.")
    providers = []
    for name in args.providers or (list(PROVIDERS) if gpu else CPU_PROVIDERS):
        reason = PROVIDERS[name].missing()
        if reason:
            _note(f"skip provider {name}: {reason}")
        else:
            providers.append(name)
    ceilings = None
    if gpu:
        _note("measuring ceilings ...")
        ceilings = measure_ceilings(device, max(1 << 30, 16 * DeviceInfo.current().l2_bytes), 8192)
        print(format_ceilings(ceilings), flush=True)
    else:
        _note("skip ceilings: they are measured on a GPU only")
    workloads = _selected_workloads(args.workload)
    todo = [(w, c) for w in workloads for c in _cases(w, tiny)]
    results, start = [], time.perf_counter()
    report = _environment() | {"schema": SCHEMA_VERSION, "tiny": tiny, "providers": providers,
                               "ceilings": ceilings, "results": results, "complete": False}
    for index, (workload, case) in enumerate(todo, 1):
        progress = _progress(f"{index}/{len(todo)}", f"{workload.name} / {case.label}", start)
        results.extend(measure_case(workload, case, providers, device, ceilings, progress))
        if args.json:  # a run cut short (time limit, fault) still leaves the cases it finished
            Path(args.json).write_text(json.dumps(report, indent=1))
    report["complete"] = True
    return _finish(report, args)


def _finish(report: dict, args: argparse.Namespace) -> int:
    print(format_table(report), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
        _note(f"wrote {args.json}")
    if args.plot and write_plot(report, args.plot):
        _note(f"wrote {args.plot}")
    return 1 if any(r["status"] == "FAIL" for r in report["results"]) else 0


def run_check(args: argparse.Namespace) -> int:
    gpu = timings_meaningful()
    tiny = args.tiny or not gpu
    device = "cuda" if gpu else "cpu"
    failures = total = 0
    for workload in _selected_workloads(args.workload):
        for case in _cases(workload, tiny):
            kw = case.build(device, seed=0).kwargs
            total += 1
            try:
                prepared = _prepare_pagedattn(workload.kernel, kw)
                out = torch.full_like(kw["q"], float("nan"))
                prepared.run(out)
                err = reference.rel_l2(out, _reference(workload.kernel, kw))
                detail = f"profile {prepared.profile['short']} ({prepared.profile['source']})"
            except Exception as exc:
                err, detail = float("nan"), f"{type(exc).__name__}: {exc}"
            ok = err < TOLERANCE
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {workload.name:<15} {case.label:<36} rel-L2 {err:.2e}  {detail}",
                  flush=True)
    print(f"{total - failures}/{total} cases within rel-L2 < {TOLERANCE:g}"
          + ("" if gpu else " (Triton interpreter, tiny cases)"))
    return 1 if failures else 0


def _workload_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workload", nargs="+", choices=list(WORKLOADS), metavar="NAME",
                        help=f"workloads to run (default: all): {', '.join(WORKLOADS)}")
    parser.add_argument("--tiny", action="store_true",
                        help="the tiny cases (always used without a GPU, where the interpreter runs them)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _workload_argument(parser)
    parser.add_argument("--providers", nargs="+", metavar="NAME",
                        help=f"providers (default: all on a GPU, {', '.join(CPU_PROVIDERS)} without): "
                             f"{', '.join(PROVIDERS)}")
    parser.add_argument("--json", metavar="PATH", help="write the full report as JSON")
    parser.add_argument("--plot", metavar="PNG", help="write bars of %% of the HBM ceiling (needs matplotlib)")
    parser.add_argument("--from-json", nargs="+", metavar="PATH",
                        help="measure nothing: print (and --plot / --json) the report(s) saved by --json")
    parser.set_defaults(func=run_bench)


def add_check_arguments(parser: argparse.ArgumentParser) -> None:
    _workload_argument(parser)
    parser.set_defaults(func=run_check)
