"""Sparse paged GQA attention: each query row attends to its own top-k selected tokens.

Grid: (rows, KV heads, splits). A program owns one row and the GROUP query heads that share one
KV head, packed into BLOCK_M rows (rows past GROUP are padding); it walks its share of the row's
index list TILE_N indices at a time, resolving each logical position through the row's request
block table (`token_to_req`). Unused slots (-1), positions whose page lies outside the table and
physical pages outside [0, num_blocks) are masked, never read; a row with nothing valid gives 0.
With `counts`, a row stops after its first counts[row] slots instead of scanning the padding.

Launch parameters and the shape property each is tied to (values come from `pagedattn.profiles`):
  BLOCK_M     next_pow2(GROUP), at least 16 (the matrix unit's minimum): tied to the GQA ratio
              only. TP4 (6:1) and TP8 (3:1) pay for 16 rows while using 6 or 3; see
              docs/perf-notes.md for what would remove that padding.
  TILE_N      indices per step; tied to head size and KV dtype through shared memory and to how
              many gathered bytes a program keeps in flight.
  num_splits  segments of the index list; tied to rows x KV heads: few programs (decode-like
              calls) split the list so the SMs fill, many programs (prefill) use 1, which writes
              `out` directly and compiles the workspace out.
  num_warps / num_stages / kv_major   tied to KV dtype and GROUP; kv_major upcasts FP8 tiles in
              registers (see ops/common.py).
"""

import torch
import triton
import triton.language as tl

from ..profiles.types import LaunchProfile
from .common import (
    NEG_BIG, attend_tile, launch_merge, load_scale, load_tokens, page_lookup, prepare_query, scale_args, split_workspace, write_rows,
)


@triton.jit
def sparse_attention_kernel(
    q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr,
    indices_ptr, counts_ptr, table_ptr, req_ptr, k_scale_ptr, v_scale_ptr,
    k_scale_value, v_scale_value, softmax_scale,
    num_rows, num_reqs, num_blocks, max_blocks, topk, num_splits,
    stride_q_row, stride_q_head,
    stride_k_block, stride_k_slot, stride_k_head,
    stride_v_block, stride_v_slot, stride_v_head,
    stride_o_row, stride_o_head, stride_idx_row, stride_table,
    NUM_Q_HEADS: tl.constexpr, GROUP: tl.constexpr, HEAD: tl.constexpr, HEAD_PAD: tl.constexpr,
    PAGE: tl.constexpr, BLOCK_M: tl.constexpr, TILE_N: tl.constexpr, SPLIT: tl.constexpr,
    KV_MAJOR: tl.constexpr, HAS_COUNTS: tl.constexpr,
    KV_FP8: tl.constexpr, K_SCALE_TENSOR: tl.constexpr, V_SCALE_TENSOR: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    kv_head = tl.program_id(1)
    split = tl.program_id(2)

    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, TILE_N)
    offs_d = tl.arange(0, HEAD_PAD)
    head = kv_head * GROUP + offs_m
    row_ok = offs_m < GROUP
    d_ok = offs_d < HEAD

    req = tl.load(req_ptr + row)
    used = topk
    if HAS_COUNTS:
        used = tl.minimum(tl.load(counts_ptr + row), topk)
    used = tl.where((req >= 0) & (req < num_reqs), used, 0)  # a row of no known request sees nothing
    per_split = tl.cdiv(tl.cdiv(used, num_splits), TILE_N) * TILE_N
    lo = split * per_split
    hi = tl.minimum(lo + per_split, used)

    out_ptrs = out_ptr + row * stride_o_row + head[:, None] * stride_o_head + offs_d[None, :]
    part_rows = (split * num_rows + row) * NUM_Q_HEADS + head  # [BLOCK_M] int64
    part_ptrs = part_ptr + part_rows[:, None] * HEAD_PAD + offs_d[None, :]
    if SPLIT:
        if lo >= hi:
            tl.store(lse_ptr + part_rows, tl.full([BLOCK_M], float("-inf"), tl.float32), mask=row_ok)
            return

    q_ptrs = q_ptr + row * stride_q_row + head[:, None] * stride_q_head + offs_d[None, :]
    q = tl.load(q_ptrs, mask=row_ok[:, None] & d_ok[None, :], other=0.0)  # [BLOCK_M, HEAD_PAD]
    q, score_scale = prepare_query(q, softmax_scale, load_scale(k_scale_ptr, k_scale_value, K_SCALE_TENSOR), KV_FP8)
    v_scale = load_scale(v_scale_ptr, v_scale_value, V_SCALE_TENSOR)
    m_i = tl.full([BLOCK_M], NEG_BIG, tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    if KV_MAJOR:
        q = tl.trans(q)  # [HEAD_PAD, BLOCK_M]
        acc = tl.zeros([HEAD_PAD, BLOCK_M], tl.float32)
    else:
        acc = tl.zeros([BLOCK_M, HEAD_PAD], tl.float32)

    table_row = table_ptr + tl.where((req >= 0) & (req < num_reqs), req, 0).to(tl.int64) * stride_table
    k_head = kv_head.to(tl.int64) * stride_k_head
    v_head = kv_head.to(tl.int64) * stride_v_head
    for start in range(lo, hi, TILE_N):
        j = start + offs_n
        pos = tl.load(indices_ptr + row * stride_idx_row + j, mask=j < hi, other=-1)  # [TILE_N]
        phys, slot, key_ok = page_lookup(table_row, pos, j < hi, max_blocks, num_blocks, PAGE)
        k = load_tokens(k_ptr, phys, slot, key_ok, stride_k_block, stride_k_slot, k_head, offs_d, HEAD, HEAD_PAD)
        v = load_tokens(v_ptr, phys, slot, key_ok, stride_v_block, stride_v_slot, v_head, offs_d, HEAD, HEAD_PAD)
        if KV_MAJOR:
            visible = key_ok[:, None] & row_ok[None, :]
        else:
            visible = row_ok[:, None] & key_ok[None, :]
        acc, m_i, l_i = attend_tile(q, k.to(q.dtype), v.to(q.dtype), visible, acc, m_i, l_i,
                                    score_scale, 1.0, False, KV_MAJOR)
    if KV_MAJOR:
        acc = tl.trans(acc)
    write_rows(acc, m_i, l_i, v_scale, row_ok, d_ok, out_ptrs, part_ptrs, lse_ptr + part_rows, SPLIT)


def launch_sparse_attention(
    q, k_cache, v_cache, out, indices, block_table, token_to_req, counts, *,
    softmax_scale: float, k_scale, v_scale, profile: LaunchProfile,
) -> None:
    """Launch with the given profile; decides nothing."""
    num_rows, num_q_heads, head = q.shape
    num_blocks, page, num_kv_heads, _ = k_cache.shape
    head_pad = triton.next_power_of_2(head)
    splits = profile.num_splits
    if num_rows == 0:
        return
    part, lse = split_workspace(splits, num_rows, num_q_heads, head_pad, out)
    k_scale_t, k_scale_v, k_is_t = scale_args(k_scale)
    v_scale_t, v_scale_v, v_is_t = scale_args(v_scale)
    sparse_attention_kernel[(num_rows, num_kv_heads, splits)](
        q, k_cache, v_cache, out, part, lse,
        indices, counts, block_table, token_to_req, k_scale_t, v_scale_t,
        k_scale_v, v_scale_v, softmax_scale,
        num_rows, block_table.shape[0], num_blocks, block_table.shape[1], indices.shape[1], splits,
        q.stride(0), q.stride(1),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        out.stride(0), out.stride(1), indices.stride(0), block_table.stride(0),
        NUM_Q_HEADS=num_q_heads, GROUP=num_q_heads // num_kv_heads, HEAD=head, HEAD_PAD=head_pad, PAGE=page,
        BLOCK_M=profile.block_m, TILE_N=profile.tile_n, SPLIT=splits > 1, KV_MAJOR=profile.kv_major,
        HAS_COUNTS=counts is not None, KV_FP8=k_cache.dtype == torch.float8_e4m3fn, K_SCALE_TENSOR=k_is_t, V_SCALE_TENSOR=v_is_t,
        num_warps=profile.num_warps, num_stages=profile.num_stages,
    )
    if splits > 1:
        launch_merge(part, lse, out)
