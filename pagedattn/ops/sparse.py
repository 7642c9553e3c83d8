"""Sparse paged GQA attention: each query row attends to its own top-k selected tokens.

Two launches. `selected_tokens_kernel` resolves every (row, slot) once: logical position -> page of the
row's request (`token_to_req`, `block_table`) -> physical token id, or -1 for an unused slot (-1), a
position whose page lies outside the table, a physical page outside [0, num_blocks) or a slot past
counts[row] (the Gluon kernels ask for rows padded with -1 past top-k as far as their rings read ahead,
ops/sparse_exchange.py's `token_row_width`). Then `sparse_attention_kernel`, grid (rows, KV heads,
splits): a program owns one row and the GROUP query heads that share one KV head, packed into BLOCK_M
rows (rows past GROUP are padding), and walks its share of the row's token ids TILE_N at a time. Its
loop has a single dependent load (token id -> K/V); resolving pages inside the loop made it two, and the
loop waited on both every step. With ADDRESSES_AHEAD the token ids are read one step ahead into
registers (ops/common.py, "addresses one step ahead") so the K/V copies of num_stages - 1 tiles stay in
flight.
Invalid entries are masked, never read; a row with nothing valid gives 0. With `counts`, a row
stops after its first counts[row] slots instead of scanning the padding.

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
              registers (see ops/common.py). addresses_ahead: token ids read a step
              ahead; the H200 table uses it for BF16 at 2 stages (ids in registers
              instead of a cp.async stage), not for FP8 (perf-notes v6).

Counts that change with every batch (rows, requests, the block table's width) are not specialised
by Triton, so a new batch size never compiles a new kernel.
"""

from typing import NamedTuple

import torch
import triton
import triton.language as tl

from ..profiles.types import LaunchProfile
from .common import (
    NEG_BIG, attend_tile, compute_values, kernel_cache, launch_merge, load_scale, load_tokens, page_lookup,
    prepare_query, scale_args, split_position, split_workspace, write_rows,
)


@triton.jit(do_not_specialize=["num_reqs", "max_blocks", "stride_table"])
def selected_tokens_kernel(
    indices_ptr, counts_ptr, table_ptr, req_ptr, tokens_ptr,
    num_reqs, num_blocks, max_blocks, topk, width, stride_idx_row, stride_table,
    PAGE: tl.constexpr, BLOCK: tl.constexpr, HAS_COUNTS: tl.constexpr,
):
    """tokens[row, j] = physical token (page * PAGE + slot) of the row's j-th selection, or -1; the
    row's `width` - topk slots past its selections (the padding the Gluon kernels read unmasked) -1.

    Resolving pages here, once per (row, slot), leaves the attention loop one dependent load
    (token id -> K/V) instead of two (index -> page table -> K/V), which its pipeliner can hide."""
    row = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    req = tl.load(req_ptr + row)
    used = topk
    if HAS_COUNTS:
        used = tl.minimum(tl.load(counts_ptr + row), topk)
    req_ok = (req >= 0) & (req < num_reqs)  # a row of no known request sees nothing
    in_range = (j < used) & req_ok
    pos = tl.load(indices_ptr + row * stride_idx_row + j, mask=in_range, other=-1)
    table_row = table_ptr + tl.where(req_ok, req, 0).to(tl.int64) * stride_table
    phys, slot, valid = page_lookup(table_row, pos, in_range, max_blocks, num_blocks, PAGE)
    token = tl.where(valid, phys * PAGE + slot, -1).to(tl.int32)
    tl.store(tokens_ptr + row * width + j, token, mask=j < width)


@triton.jit(do_not_specialize=["num_rows"])
def sparse_attention_kernel(
    q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr,
    tokens_ptr, counts_ptr, k_scale_ptr, v_scale_ptr,
    k_scale_value, v_scale_value, softmax_scale,
    num_rows, topk, stride_tokens, num_splits,
    stride_q_row, stride_q_head,
    stride_k_block, stride_k_slot, stride_k_head,
    stride_v_block, stride_v_slot, stride_v_head,
    stride_o_row, stride_o_head,
    NUM_Q_HEADS: tl.constexpr, GROUP: tl.constexpr, HEAD: tl.constexpr, HEAD_PAD: tl.constexpr,
    PAGE: tl.constexpr, BLOCK_M: tl.constexpr, TILE_N: tl.constexpr, SPLIT: tl.constexpr,
    KV_MAJOR: tl.constexpr, ADDRESSES_AHEAD: tl.constexpr, HAS_COUNTS: tl.constexpr,
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

    used = topk
    if HAS_COUNTS:  # stop after the row's valid slots instead of scanning its padding
        used = tl.maximum(tl.minimum(tl.load(counts_ptr + row), topk), 0)
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

    k_head = kv_head * stride_k_head
    v_head = kv_head * stride_v_head
    tokens_row = tokens_ptr + row * stride_tokens
    j = lo + offs_n
    if ADDRESSES_AHEAD:
        token = tl.load(tokens_row + j, mask=j < hi, other=-1)  # [TILE_N]
    for _ in range(lo, hi, TILE_N):
        if not ADDRESSES_AHEAD:
            token = tl.load(tokens_row + j, mask=j < hi, other=-1)
        key_ok = token >= 0
        phys, slot = split_position(token, PAGE)
        k = load_tokens(k_ptr, phys, slot, key_ok, stride_k_block, stride_k_slot, k_head, offs_d, HEAD, HEAD_PAD)
        v = load_tokens(v_ptr, phys, slot, key_ok, stride_v_block, stride_v_slot, v_head, offs_d, HEAD, HEAD_PAD)
        if KV_MAJOR:
            visible = key_ok[:, None]  # [TILE_N, 1]
        else:
            visible = key_ok[None, :]  # [1, TILE_N]
        acc, m_i, l_i = attend_tile(q, compute_values(k, q.dtype, KV_FP8), compute_values(v, q.dtype, KV_FP8),
                                    visible, acc, m_i, l_i, score_scale, 1.0, False, KV_MAJOR)
        j += TILE_N
        if ADDRESSES_AHEAD:
            token = tl.load(tokens_row + j, mask=j < hi, other=-1)
    if KV_MAJOR:
        acc = tl.trans(acc)
    write_rows(acc, m_i, l_i, v_scale, row_ok, d_ok, out_ptrs, part_ptrs, lse_ptr + part_rows, SPLIT)


_RESOLVE_BLOCK = 1024  # selections resolved per program of the token pre-pass


def resolve_selections(indices, counts, block_table, token_to_req, num_blocks: int, page: int,
                       width: int | None = None) -> torch.Tensor:
    """[rows, width] int32 physical token ids of the selections (-1: unused or invalid; width >= topk,
    topk by default, -1 past topk), the token pre-pass every sparse kernel reads (this module's,
    ops/sparse_exchange.py's, ops/sparse_keys_rows.py's)."""
    num_rows, topk = indices.shape
    width = topk if width is None else width
    tokens = torch.empty(num_rows, width, dtype=torch.int32, device=indices.device)
    selected_tokens_kernel[(num_rows, triton.cdiv(width, _RESOLVE_BLOCK))](
        indices, counts, block_table, token_to_req, tokens,
        block_table.shape[0], num_blocks, block_table.shape[1], topk, width, indices.stride(0), block_table.stride(0),
        PAGE=page, BLOCK=_RESOLVE_BLOCK, HAS_COUNTS=counts is not None,
    )
    return tokens


class SparseCall(NamedTuple):
    """What every sparse launcher computes before its kernel: the resolved token ids, the split
    workspace (empty when splits == 1) and the scales as kernel arguments (`scale_args`)."""
    topk: int
    tokens: torch.Tensor
    part: torch.Tensor
    lse: torch.Tensor
    k_scale: tuple
    v_scale: tuple

    def kernel_args(self, q, k_cache, v_cache, out, counts, softmax_scale: float, splits: int) -> tuple:
        """The positional arguments the three sparse kernels share, in their order: tensors, scales,
        sizes, strides (their constexprs differ and stay with each launcher)."""
        (k_scale_t, k_scale_v, _), (v_scale_t, v_scale_v, _) = self.k_scale, self.v_scale
        return (q, k_cache, v_cache, out, self.part, self.lse, self.tokens, counts, k_scale_t, v_scale_t,
                k_scale_v, v_scale_v, softmax_scale, q.shape[0], self.topk, self.tokens.stride(0), splits,
                q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
                v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), out.stride(0), out.stride(1))

    @property
    def scales_as_tensors(self) -> tuple[bool, bool]:
        """(k_scale, v_scale) given as device tensors: the kernels' K/V_SCALE_TENSOR constexprs."""
        return self.k_scale[2], self.v_scale[2]


def prepare_sparse_call(q, k_cache, out, indices, block_table, token_to_req, counts, k_scale, v_scale,
                        splits: int, head_pad: int, token_width=None) -> SparseCall | None:
    """The sparse launchers' shared preamble: None for an empty call (no rows or no selections;
    `out` is zeroed), else the token pre-pass (rows `token_width(topk)` long if given, else topk),
    workspace and scale arguments."""
    num_rows, num_q_heads, _ = q.shape
    num_blocks, page = k_cache.shape[:2]
    if num_rows == 0 or indices.shape[1] == 0:
        out.zero_()
        return None
    topk = indices.shape[1]
    tokens = resolve_selections(indices, counts, block_table, token_to_req, num_blocks, page,
                                None if token_width is None else token_width(topk))
    part, lse = split_workspace(splits, num_rows, num_q_heads, head_pad, out)
    return SparseCall(topk, tokens, part, lse, scale_args(k_scale), scale_args(v_scale))


def launch_sparse_attention(
    q, k_cache, v_cache, out, indices, block_table, token_to_req, counts, *,
    softmax_scale: float, k_scale, v_scale, profile: LaunchProfile,
) -> None:
    """Resolve selections to physical tokens, then launch attention with the given profile; decides nothing."""
    num_rows, num_q_heads, head = q.shape
    page, num_kv_heads = k_cache.shape[1:3]
    head_pad = triton.next_power_of_2(head)
    splits = profile.num_splits
    call = prepare_sparse_call(q, k_cache, out, indices, block_table, token_to_req, counts, k_scale, v_scale, splits,
                               head_pad)
    if call is None:
        return
    k_is_t, v_is_t = call.scales_as_tensors
    sparse_attention_kernel[(num_rows, num_kv_heads, splits)](
        *call.kernel_args(q, kernel_cache(k_cache), kernel_cache(v_cache), out, counts, softmax_scale, splits),
        NUM_Q_HEADS=num_q_heads, GROUP=num_q_heads // num_kv_heads, HEAD=head, HEAD_PAD=head_pad, PAGE=page,
        BLOCK_M=profile.block_m, TILE_N=profile.tile_n, SPLIT=splits > 1, KV_MAJOR=profile.kv_major,
        ADDRESSES_AHEAD=profile.addresses_ahead, HAS_COUNTS=counts is not None,
        KV_FP8=k_cache.dtype == torch.float8_e4m3fn, K_SCALE_TENSOR=k_is_t, V_SCALE_TENSOR=v_is_t,
        num_warps=profile.num_warps, num_stages=profile.num_stages,
    )
    if splits > 1:
        launch_merge(call.part, call.lse, out)
