"""Unified paged attention: prefill chunks, decode tokens and speculative verify queries in one
variable-length batch, causal, with the queries at the end of each sequence.

Grid: (query blocks, KV heads, KV segments). A program owns BLOCK_Q consecutive query tokens of
one sequence x the GROUP query heads that share one KV head, packed into BLOCK_M rows
(row r = token r // GROUP, head r % GROUP; rows past BLOCK_Q * GROUP are padding). Every KV tile
is therefore loaded once for all draft tokens and all heads of a group: a 4-token verify with
16 heads per KV head reads its pages once, not four times.

Launch parameters and the shape property each is tied to (values come from `pagedattn.profiles`):
  BLOCK_M     >= GROUP (num_q_heads // num_kv_heads). BLOCK_Q = BLOCK_M // GROUP is tied to the
              query length: decode wants BLOCK_Q = 1 (BLOCK_M = next_pow2(GROUP), at least 16 for
              the matrix unit), verify wants BLOCK_Q >= the draft length so one program covers all
              draft tokens (16:1 ratio, 4 tokens -> 64), prefill wants the largest block the
              registers allow. It is never tied to the head size.
  TILE_N      KV tokens per loop step; tied to head size and KV dtype through shared memory
              (TILE_N x HEAD x bytes x 2 x stages must fit) and to the page size only through
              coalescing (each token's head vector is contiguous, so any TILE_N works for any page).
  num_splits  KV segments; tied to parallelism: query blocks x KV heads programs must fill the
              SMs, so few sequences or few KV heads (decode, long single requests) split the KV
              range, and each segment must keep enough tiles to amortise its partial write.
              The grid is fixed from host-known shapes; the segment bounds of each sequence are
              computed on the device from its own length, and segments that start past it exit.
  num_warps / num_stages   tied to BLOCK_M x HEAD (accumulator registers) and to how many KV
              bytes must be in flight per SM to reach HBM bandwidth.
  kv_major    orientation of the two products (see `ops/common.py`); pays when K/V are FP8 or
              when BLOCK_M is small compared with TILE_N.
  addresses_ahead   page-table entries read a step ahead (ops/common.py); tied to the KV bytes a
              program must keep in flight and to shared memory: num_stages - 1 tiles in flight
              instead of one, for one more tile buffer (D=256 BF16 verify: 32-token tiles at 3
              stages then fit one program per SM, 16-token tiles at 4 stages still two). The H200
              table uses it for verify and prefill, not decode (perf-notes v6).

Arguments that change with every batch of a serving engine (sequence and token counts, the block
table's width) are not specialised by Triton (`BATCH_SIZED_ARGS`): specialised, a count that
happens to be 1 or a multiple of 16 would compile a new kernel in the middle of serving.

The number of query blocks is bounded by num_tokens // BLOCK_Q + num_seqs, so the grid needs no
device read; each program finds its sequence by binary search over cu_seqlens_q. A launch whose
sequences have at most queries_upto < num_tokens queries (BY_SEQUENCE) takes cdiv(queries_upto,
BLOCK_Q) blocks per sequence instead, in sequence order: the token-order grid would give every
query block of the other launch's chunks a program that only exits, 0.18-0.23 ms for ~65K programs
on the H200 (perf-notes v32 item 6), where the per-sequence grid is num_seqs x 2 at BLOCK_Q 4.
Split, such a launch lays its fp32 partials out by sequence too, queries_upto rows per sequence
(`common.RowsBySequence`), and its merge writes only its own sequences' rows.

A launch runs the sequences with queries_above < query count <= queries_upto (runtime arguments,
not specialised). The profile layer runs a prefill call whose batch may also hold decode and
verify sequences as two or three launches (`select.partitioned_plan`): the chunks on their wide
blocks, the short sequences on narrow ones (those a narrow block cannot hold on blocks of their
own, `select.short_launches`), where one launch would pack a decode token into a block of BLOCK_M
128 rows. The programs of the other launches' sequences exit; in a split launch on the token-order
grid they first set their rows' lse to -inf, so the merge writes zeros there, and the other
launches, which run after it, write those rows.
"""

import torch
import triton
import triton.language as tl

from ..profiles.types import LaunchProfile
from .common import (
    LOG2E, NEG_BIG, RowsBySequence, attend_tile, compute_values, kernel_cache, launch_merge, load_scale, load_tokens,
    page_lookup, prepare_query, scale_args, split_workspace, write_rows,
)

BATCH_SIZED_ARGS = ["num_seqs", "num_tokens", "max_blocks", "stride_table", "queries_above", "queries_upto"]


@triton.jit
def _find_sequence(cu_q_ptr, num_seqs, block_id, BLOCK_Q: tl.constexpr):
    """Largest s with cu_q[s] // BLOCK_Q + s <= block_id (sequence s owns cdiv-many blocks)."""
    lo = 0
    hi = num_seqs
    while lo < hi:
        mid = (lo + hi) // 2
        start = tl.load(cu_q_ptr + mid) // BLOCK_Q + mid
        if start <= block_id:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


@triton.jit
def _attend_tiles(
    q, acc, m_i, l_i, k_ptr, v_ptr, table_row, k_head, v_head, kv_lo, kv_hi, q_pos,
    tile_lo, tile_hi, max_blocks, num_blocks, score_scale, softcap, window,
    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, offs_n, offs_d,
    HEAD: tl.constexpr, HEAD_PAD: tl.constexpr, PAGE: tl.constexpr, TILE_N: tl.constexpr,
    CAUSAL: tl.constexpr, HAS_WINDOW: tl.constexpr, HAS_SOFTCAP: tl.constexpr, KV_MAJOR: tl.constexpr,
    ADDRESSES_AHEAD: tl.constexpr, KV_FP8: tl.constexpr,
):
    """Online softmax over KV tiles [tile_lo, tile_hi); CAUSAL=False for tiles no query can see past.

    ADDRESSES_AHEAD: each step reads the next tile's page-table entries into registers and carries
    them, so the K/V copies of num_stages - 1 tiles stay in flight (ops/common.py)."""
    pos = kv_lo + tile_lo * TILE_N + offs_n  # [TILE_N] absolute key positions
    if ADDRESSES_AHEAD:
        phys, slot, key_ok = page_lookup(table_row, pos, pos < kv_hi, max_blocks, num_blocks, PAGE)
    for _ in range(tile_lo, tile_hi):
        if not ADDRESSES_AHEAD:
            phys, slot, key_ok = page_lookup(table_row, pos, pos < kv_hi, max_blocks, num_blocks, PAGE)
        k = load_tokens(k_ptr, phys, slot, key_ok, stride_k_block, stride_k_slot, k_head, offs_d, HEAD, HEAD_PAD)
        v = load_tokens(v_ptr, phys, slot, key_ok, stride_v_block, stride_v_slot, v_head, offs_d, HEAD, HEAD_PAD)
        if KV_MAJOR:
            visible = key_ok[:, None]  # [TILE_N, 1], or [TILE_N, BLOCK_M] with the causal mask
            if CAUSAL:
                visible = visible & (pos[:, None] <= q_pos[None, :])
                if HAS_WINDOW:
                    visible = visible & (pos[:, None] > q_pos[None, :] - window)
        else:
            visible = key_ok[None, :]  # [1, TILE_N], or [BLOCK_M, TILE_N] with the causal mask
            if CAUSAL:
                visible = visible & (pos[None, :] <= q_pos[:, None])
                if HAS_WINDOW:
                    visible = visible & (pos[None, :] > q_pos[:, None] - window)
        acc, m_i, l_i = attend_tile(q, compute_values(k, q.dtype, KV_FP8), compute_values(v, q.dtype, KV_FP8),
                                    visible, acc, m_i, l_i, score_scale, softcap, HAS_SOFTCAP, KV_MAJOR)
        pos += TILE_N
        if ADDRESSES_AHEAD:
            phys, slot, key_ok = page_lookup(table_row, pos, pos < kv_hi, max_blocks, num_blocks, PAGE)
    return acc, m_i, l_i


@triton.jit(do_not_specialize=BATCH_SIZED_ARGS)
def unified_attention_kernel(
    q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr,
    cu_q_ptr, seq_lens_ptr, table_ptr, sinks_ptr, k_scale_ptr, v_scale_ptr,
    k_scale_value, v_scale_value, softmax_scale, softcap, window,
    num_seqs, num_tokens, num_blocks, max_blocks, num_splits, queries_above, queries_upto,
    stride_q_tok, stride_q_head,
    stride_k_block, stride_k_slot, stride_k_head,
    stride_v_block, stride_v_slot, stride_v_head,
    stride_o_tok, stride_o_head, stride_table,
    NUM_Q_HEADS: tl.constexpr, GROUP: tl.constexpr, HEAD: tl.constexpr, HEAD_PAD: tl.constexpr,
    PAGE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_Q: tl.constexpr, TILE_N: tl.constexpr,
    SPLIT: tl.constexpr, BY_SEQUENCE: tl.constexpr, KV_MAJOR: tl.constexpr, ADDRESSES_AHEAD: tl.constexpr,
    HAS_WINDOW: tl.constexpr, HAS_SOFTCAP: tl.constexpr, HAS_SINKS: tl.constexpr,
    KV_FP8: tl.constexpr, K_SCALE_TENSOR: tl.constexpr, V_SCALE_TENSOR: tl.constexpr,
):
    block_id = tl.program_id(0)
    kv_head = tl.program_id(1)
    split = tl.program_id(2)

    if BY_SEQUENCE:  # cdiv(queries_upto, BLOCK_Q) blocks per sequence, in sequence order
        seq_blocks = tl.cdiv(queries_upto, BLOCK_Q)
        seq = block_id // seq_blocks
    else:
        seq = _find_sequence(cu_q_ptr, num_seqs, block_id, BLOCK_Q)
    q_first = tl.load(cu_q_ptr + seq)
    q_len = tl.load(cu_q_ptr + seq + 1) - q_first
    if BY_SEQUENCE:
        q_block = block_id % seq_blocks
    else:
        q_block = block_id - (q_first // BLOCK_Q + seq)
    if q_block * BLOCK_Q >= q_len:
        return
    other_launch = (q_len <= queries_above) | (q_len > queries_upto)  # the plan's other launch writes its rows
    if BY_SEQUENCE or not SPLIT:  # the per-sequence merge skips those rows; one pass writes no other row
        if other_launch:
            return
    context = tl.load(seq_lens_ptr + seq) - q_len  # absolute position of the sequence's first query

    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, TILE_N)
    offs_d = tl.arange(0, HEAD_PAD)
    tok = q_block * BLOCK_Q + offs_m // GROUP  # [BLOCK_M] query token within the sequence
    head = kv_head * GROUP + offs_m % GROUP
    row_ok = (offs_m < BLOCK_Q * GROUP) & (tok < q_len)
    q_pos = context + tok
    d_ok = offs_d < HEAD

    # KV range this block can see, cut into num_splits tile-aligned segments
    kv_hi = context + tl.minimum(q_block * BLOCK_Q + BLOCK_Q, q_len)
    kv_lo = 0
    if HAS_WINDOW:
        kv_lo = tl.maximum(context + q_block * BLOCK_Q - window + 1, 0)
    kv_lo = kv_lo // TILE_N * TILE_N
    num_tiles = tl.cdiv(kv_hi - kv_lo, TILE_N)
    tiles_per_split = tl.cdiv(num_tiles, num_splits)
    tile_lo = split * tiles_per_split
    tile_hi = tl.minimum(tile_lo + tiles_per_split, num_tiles)

    row_tok = (q_first + tok).to(tl.int64)  # [BLOCK_M] token index in the batch
    out_ptrs = out_ptr + row_tok[:, None] * stride_o_tok + head[:, None] * stride_o_head + offs_d[None, :]
    if BY_SEQUENCE:  # queries_upto partial rows per sequence (`common.RowsBySequence`)
        part_rows = (split * num_seqs + seq.to(tl.int64)) * queries_upto + tok
    else:
        part_rows = split * num_tokens + row_tok
    part_rows = part_rows * NUM_Q_HEADS + head  # [BLOCK_M] int64
    part_ptrs = part_ptr + part_rows[:, None] * HEAD_PAD + offs_d[None, :]
    if SPLIT:  # a segment past the sequence's keys, or (token-order grid) a sequence of the other launch: merged as zeros
        if (tile_lo >= tile_hi) | other_launch:
            tl.store(lse_ptr + part_rows, tl.full([BLOCK_M], float("-inf"), tl.float32), mask=row_ok)
            return

    q_ptrs = q_ptr + row_tok[:, None] * stride_q_tok + head[:, None] * stride_q_head + offs_d[None, :]
    q = tl.load(q_ptrs, mask=row_ok[:, None] & d_ok[None, :], other=0.0)  # [BLOCK_M, HEAD_PAD]
    q, score_scale = prepare_query(q, softmax_scale, load_scale(k_scale_ptr, k_scale_value, K_SCALE_TENSOR), KV_FP8)
    v_scale = load_scale(v_scale_ptr, v_scale_value, V_SCALE_TENSOR)

    m_i = tl.full([BLOCK_M], NEG_BIG, tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    if HAS_SINKS:  # the sink joins the denominator once: in segment 0
        sink = tl.load(sinks_ptr + head, mask=row_ok, other=0.0).to(tl.float32) * LOG2E
        m_i = tl.where(split == 0, sink, m_i)
        l_i = tl.where(split == 0, 1.0, l_i)
    if KV_MAJOR:
        q = tl.trans(q)  # [HEAD_PAD, BLOCK_M]
        acc = tl.zeros([HEAD_PAD, BLOCK_M], tl.float32)
    else:
        acc = tl.zeros([BLOCK_M, HEAD_PAD], tl.float32)

    table_row = table_ptr + seq.to(tl.int64) * stride_table
    k_head = kv_head * stride_k_head
    v_head = kv_head * stride_v_head
    # tiles wholly at or before the block's first query position need no causal mask
    free_tiles = 0
    if not HAS_WINDOW:
        free_tiles = (context + q_block * BLOCK_Q - kv_lo + 1) // TILE_N
    acc, m_i, l_i = _attend_tiles(
        q, acc, m_i, l_i, k_ptr, v_ptr, table_row, k_head, v_head, kv_lo, kv_hi, q_pos,
        tile_lo, tl.minimum(tile_hi, free_tiles), max_blocks, num_blocks, score_scale, softcap, window,
        stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, offs_n, offs_d,
        HEAD, HEAD_PAD, PAGE, TILE_N, False, HAS_WINDOW, HAS_SOFTCAP, KV_MAJOR, ADDRESSES_AHEAD, KV_FP8)
    acc, m_i, l_i = _attend_tiles(
        q, acc, m_i, l_i, k_ptr, v_ptr, table_row, k_head, v_head, kv_lo, kv_hi, q_pos,
        tl.maximum(tile_lo, free_tiles), tile_hi, max_blocks, num_blocks, score_scale, softcap, window,
        stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, offs_n, offs_d,
        HEAD, HEAD_PAD, PAGE, TILE_N, True, HAS_WINDOW, HAS_SOFTCAP, KV_MAJOR, ADDRESSES_AHEAD, KV_FP8)
    if KV_MAJOR:
        acc = tl.trans(acc)
    write_rows(acc, m_i, l_i, v_scale, row_ok, d_ok, out_ptrs, part_ptrs, lse_ptr + part_rows, SPLIT)


def launch_unified_attention(
    q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, block_table, *,
    softmax_scale: float, k_scale, v_scale, sliding_window, softcap, sinks, profile: LaunchProfile,
    queries_above: int, queries_upto: int,
) -> None:
    """Launch with the given profile over the sequences with queries_above < queries <= queries_upto
    (the profile layer's plan, `select.unified_launch_plan`); decides nothing."""
    num_tokens, num_q_heads, head = q.shape
    num_blocks, page, num_kv_heads, _ = k_cache.shape
    num_seqs = seq_lens.shape[0]
    group = num_q_heads // num_kv_heads
    block_q = profile.block_q(group)
    head_pad = triton.next_power_of_2(head)
    splits = profile.num_splits
    if num_tokens == 0:
        return
    by_sequence = queries_upto < num_tokens
    part, lse = split_workspace(splits, num_seqs * queries_upto if by_sequence else num_tokens, num_q_heads, head_pad,
                                out)
    k_scale_t, k_scale_v, k_is_t = scale_args(k_scale)
    v_scale_t, v_scale_v, v_is_t = scale_args(v_scale)
    blocks = num_seqs * triton.cdiv(queries_upto, block_q) if by_sequence else num_tokens // block_q + num_seqs
    grid = (blocks, num_kv_heads, splits)
    unified_attention_kernel[grid](
        q, kernel_cache(k_cache), kernel_cache(v_cache), out, part, lse,
        cu_seqlens_q, seq_lens, block_table, sinks, k_scale_t, v_scale_t,
        k_scale_v, v_scale_v, softmax_scale, 1.0 if softcap is None else float(softcap),
        0 if sliding_window is None else int(sliding_window),
        num_seqs, num_tokens, num_blocks, block_table.shape[1], splits, queries_above, queries_upto,
        q.stride(0), q.stride(1),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        out.stride(0), out.stride(1), block_table.stride(0),
        NUM_Q_HEADS=num_q_heads, GROUP=group, HEAD=head, HEAD_PAD=head_pad, PAGE=page,
        BLOCK_M=profile.block_m, BLOCK_Q=block_q, TILE_N=profile.tile_n, SPLIT=splits > 1, BY_SEQUENCE=by_sequence,
        KV_MAJOR=profile.kv_major, ADDRESSES_AHEAD=profile.addresses_ahead,
        HAS_WINDOW=sliding_window is not None, HAS_SOFTCAP=softcap is not None, HAS_SINKS=sinks is not None,
        KV_FP8=k_cache.dtype == torch.float8_e4m3fn, K_SCALE_TENSOR=k_is_t, V_SCALE_TENSOR=v_is_t,
        num_warps=profile.num_warps, num_stages=profile.num_stages,
    )
    if splits > 1:
        launch_merge(part, lse, out, RowsBySequence(cu_seqlens_q, queries_above, queries_upto) if by_sequence else None)
