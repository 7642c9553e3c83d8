"""Float64 references for the public kernels: the oracle of tests, tuner and benchmark.

They take the same arguments as `pagedattn.unified_attention` / `pagedattn.sparse_attention`
(launch-profile arguments are accepted and ignored) and return a float64 tensor shaped like `q`
(and copy it into `out` when given). They favour obviousness over speed: keys are gathered from
the pages token by token into dense tensors, scores are formed explicitly, and masked keys get
-inf before a plain softmax. Work is chunked so that large benchmark shapes fit in memory.

`rel_l2` is the error measure every check of an output against a reference uses.

Semantics both references share (and the kernels must match):
  * FP8 K/V are dequantised as `K = K_fp8 * k_scale`, `V = V_fp8 * v_scale`.
  * A key whose physical page is negative or >= num_blocks, or whose logical page lies beyond the
    block table, does not exist: it is masked, never read.
  * A query row with no visible key (and no sink) outputs 0.
"""

from __future__ import annotations

import torch

_CHUNK_ELEMENTS = 1 << 25  # bound on a chunk's score / gathered-KV elements (float64: 256 MiB)


def rel_l2(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref|| in float64; NaN anywhere in `out` gives NaN (which fails any bound)."""
    out64 = out.to(torch.float64)
    ref64 = ref.to(device=out.device, dtype=torch.float64)
    return float((out64 - ref64).norm() / ref64.norm().clamp_min(1e-30))


def scale_value(scale: float | torch.Tensor | None) -> float:
    """A per-tensor dequantisation scale as a Python float (1.0 when absent)."""
    if scale is None:
        return 1.0
    if isinstance(scale, torch.Tensor):
        return float(scale.reshape(-1)[0].item())
    return float(scale)


def _gather_tokens(cache: torch.Tensor, phys: torch.Tensor, slot: torch.Tensor, valid: torch.Tensor, scale: float):
    """cache[phys, slot] as float64 * scale, zero where not valid. phys/slot/valid share a shape."""
    num_blocks = cache.shape[0]
    rows = cache[phys.clamp(0, num_blocks - 1), slot].to(torch.float64) * scale
    return torch.where(valid[..., None, None], rows, torch.zeros((), dtype=torch.float64, device=rows.device))


def _softmax_rows(scores: torch.Tensor, sink: torch.Tensor | None) -> torch.Tensor:
    """Softmax over the last axis of -inf-masked scores; an optional sink logit joins the
    denominator only. Rows with nothing visible give all-zero weights."""
    row_max = scores.amax(dim=-1, keepdim=True)
    if sink is not None:
        row_max = torch.maximum(row_max, sink)
    row_max = torch.where(torch.isinf(row_max), torch.zeros_like(row_max), row_max)
    weights = torch.exp(scores - row_max)
    denom = weights.sum(dim=-1, keepdim=True)
    if sink is not None:
        denom = denom + torch.exp(sink - row_max)
    return torch.where(denom > 0, weights / torch.where(denom > 0, denom, 1.0), torch.zeros_like(weights))


def _finish(result: torch.Tensor, out: torch.Tensor | None) -> torch.Tensor:
    if out is not None:
        out.copy_(result.to(out.dtype))
    return result


def unified_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    *,
    cu_seqlens_q: torch.Tensor,
    seq_lens: torch.Tensor,
    block_table: torch.Tensor,
    max_seqlen_q: int | None = None,
    max_seqlen_k: int | None = None,
    softmax_scale: float | None = None,
    k_scale: float | torch.Tensor | None = None,
    v_scale: float | torch.Tensor | None = None,
    sliding_window: int | None = None,
    softcap: float | None = None,
    sinks: torch.Tensor | None = None,
    out: torch.Tensor | None = None,
    profile=None,
) -> torch.Tensor:
    """Causal paged attention of a variable-length batch; queries sit at the end of each sequence."""
    num_tokens, num_q_heads, head_size = q.shape
    num_blocks, block_size, num_kv_heads, _ = k_cache.shape
    group = num_q_heads // num_kv_heads
    scale = head_size**-0.5 if softmax_scale is None else float(softmax_scale)
    ks, vs = scale_value(k_scale), scale_value(v_scale)
    device = q.device
    result = torch.zeros(num_tokens, num_q_heads, head_size, dtype=torch.float64, device=device)
    cu = cu_seqlens_q.tolist()
    lens = seq_lens.tolist()
    table = block_table.to(device=device, dtype=torch.int64)
    sink = None if sinks is None else sinks.to(device=device, dtype=torch.float64)
    for seq, kv_len in enumerate(lens):
        q_lo, q_hi = cu[seq], cu[seq + 1]
        n = q_hi - q_lo
        if n == 0:
            continue
        pos = torch.arange(kv_len, device=device)
        page = pos // block_size
        in_table = page < table.shape[1]
        phys = table[seq, page.clamp(max=table.shape[1] - 1)]
        valid = in_table & (phys >= 0) & (phys < num_blocks)
        k = _gather_tokens(k_cache, phys, pos % block_size, valid, ks)  # [L, Hkv, D]
        v = _gather_tokens(v_cache, phys, pos % block_size, valid, vs)
        step = max(1, _CHUNK_ELEMENTS // max(1, num_q_heads * kv_len))
        for c_lo in range(0, n, step):
            c_hi = min(n, c_lo + step)
            qpos = kv_len - n + torch.arange(c_lo, c_hi, device=device)
            visible = valid[None, :] & (pos[None, :] <= qpos[:, None])
            if sliding_window is not None:
                visible &= pos[None, :] > qpos[:, None] - sliding_window
            qc = q[q_lo + c_lo : q_lo + c_hi].to(torch.float64).unflatten(1, (num_kv_heads, group))
            scores = torch.einsum("nkgd,lkd->kgnl", qc, k) * scale
            if softcap is not None:
                scores = softcap * torch.tanh(scores / softcap)
            scores = scores.masked_fill(~visible, float("-inf"))
            head_sink = None if sink is None else sink.view(num_kv_heads, group, 1, 1)
            weights = _softmax_rows(scores, head_sink)
            result[q_lo + c_lo : q_lo + c_hi] = torch.einsum("kgnl,lkd->nkgd", weights, v).flatten(1, 2)
    return _finish(result, out)


def sparse_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    *,
    indices: torch.Tensor,
    block_table: torch.Tensor,
    token_to_req: torch.Tensor,
    softmax_scale: float | None = None,
    k_scale: float | torch.Tensor | None = None,
    v_scale: float | torch.Tensor | None = None,
    counts: torch.Tensor | None = None,
    out: torch.Tensor | None = None,
    profile=None,
) -> torch.Tensor:
    """Each row attends to the keys its `indices` row lists (logical positions in its request).

    Slot j of row r is used when token_to_req[r] names a row of the block table, indices[r, j] >= 0,
    j < counts[r] (if counts is given), its logical page is inside the block table and the physical
    page is in [0, num_blocks).
    Duplicate indices are separate keys (each slot counts once)."""
    num_rows, num_q_heads, head_size = q.shape
    num_blocks, block_size, num_kv_heads, _ = k_cache.shape
    group = num_q_heads // num_kv_heads
    scale = head_size**-0.5 if softmax_scale is None else float(softmax_scale)
    ks, vs = scale_value(k_scale), scale_value(v_scale)
    device = q.device
    result = torch.zeros(num_rows, num_q_heads, head_size, dtype=torch.float64, device=device)
    table = block_table.to(device=device, dtype=torch.int64)
    topk = indices.shape[1]
    step = max(1, _CHUNK_ELEMENTS // max(1, topk * num_kv_heads * head_size))
    for r_lo in range(0, num_rows, step):
        r_hi = min(num_rows, r_lo + step)
        idx = indices[r_lo:r_hi].to(device=device, dtype=torch.int64)
        req = token_to_req[r_lo:r_hi].to(device=device, dtype=torch.int64)
        page = idx // block_size
        valid = (idx >= 0) & (page < table.shape[1])
        if counts is not None:
            used = counts[r_lo:r_hi].to(device=device, dtype=torch.int64)
            valid &= torch.arange(topk, device=device)[None, :] < used[:, None]
        known = (req >= 0) & (req < table.shape[0])  # a row of no known request sees nothing
        valid &= known[:, None]
        phys = table[torch.where(known, req, 0)[:, None], page.clamp(0, table.shape[1] - 1)]
        valid &= (phys >= 0) & (phys < num_blocks)
        slot = idx.clamp(min=0) % block_size
        k = _gather_tokens(k_cache, phys, slot, valid, ks)  # [rows, topk, Hkv, D]
        v = _gather_tokens(v_cache, phys, slot, valid, vs)
        qc = q[r_lo:r_hi].to(torch.float64).unflatten(1, (num_kv_heads, group))
        scores = torch.einsum("rkgd,rtkd->rkgt", qc, k) * scale
        scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
        weights = _softmax_rows(scores, None)
        result[r_lo:r_hi] = torch.einsum("rkgt,rtkd->rkgd", weights, v).flatten(1, 2)
    return _finish(result, out)
