"""Prototype (v22): the wgmma verify kernel with two consumer warpgroups per program that share Q in
shared memory, each running its own half of the program's KV segment with its own ring (BF16 pages)."""
import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, warpgroup_mma_init, warpgroup_mma_wait

from pagedattn.ops.common import LOG2E, launch_merge, split_workspace
from pagedattn.ops.verify_wgmma import (
    BATCH_SIZED_ARGS, _fill_ring, _issue_step_tile, _no_queries, _query_block, _scores_next, _segment_tiles,
    _softmax_pv, _tile_pages,
)

BLOCK_M = gl.constexpr(64)
WARPS = gl.constexpr(4)


@gluon.jit
def _consumer(q_smem, k_ring, v_ring, usable_smem, k_ptr, v_ptr, part_ptr, lse_ptr, table_row, kv_len, context,
              q_first, q_len, kv_head, segment, num_segments, num_tokens, num_blocks, max_blocks, stride_k_block,
              stride_k_slot, k_head, stride_v_block, stride_v_slot, v_head, score_scale,
              NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, D: gl.constexpr, PAGE: gl.constexpr,
              TILE_N: gl.constexpr, STAGES: gl.constexpr, SAME_STRIDES: gl.constexpr, PAGES_AHEAD: gl.constexpr):
    S_MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[WARPS, 1], instr_shape=[16, TILE_N, 16])
    O_MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[WARPS, 1], instr_shape=[16, D, 16])
    P_OP: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=O_MMA, k_width=2)
    COPY: gl.constexpr = gl.BlockedLayout([1, 8], [32 * 8 // D, D // 8], [WARPS, 1], [1, 0])
    ROWS: gl.constexpr = gl.SliceLayout(1, O_MMA)
    tile_lo, tile_hi = _segment_tiles(kv_len, segment, num_segments, TILE_N)
    _fill_ring(k_ptr, v_ptr, k_ring, v_ring, usable_smem, table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks,
               k_head, v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
               SAME_STRIDES, COPY)
    phys, ok = _tile_pages(table_row, tile_lo + STAGES - 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages_a = gl.where(ok, phys, -1)
    phys, ok = _tile_pages(table_row, tile_lo + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages_b = gl.where(ok, phys, -1)
    o = warpgroup_mma_init(gl.zeros([BLOCK_M, D], gl.float32, O_MMA))
    m_i = gl.full([BLOCK_M], -1.0e30, gl.float32, gl.SliceLayout(1, S_MMA))
    l_i = gl.zeros([BLOCK_M], gl.float32, gl.SliceLayout(1, S_MMA))
    q_pos = context + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, S_MMA)) // GROUP
    s_a, ok_a = _scores_next(q_smem, q_smem, k_ring, v_ring, v_ring, usable_smem, tile_lo, STAGES - 2, STAGES,
                             TILE_N, S_MMA, False, COPY)
    s_a = warpgroup_mma_wait(num_outstanding=0, deps=(s_a,))
    for t in range(tile_lo, tile_hi, 2):
        s_b, ok_b = _scores_next(q_smem, q_smem, k_ring, v_ring, v_ring, usable_smem, t + 1, STAGES - 3, STAGES,
                                 TILE_N, S_MMA, False, COPY)
        s_a, o = warpgroup_mma_wait(num_outstanding=1, deps=(s_a, o))
        o, m_i, l_i, s_b = _softmax_pv(s_a, ok_a, s_b, o, m_i, l_i, k_ring, v_ring, v_ring, t, tile_hi, q_pos,
                                       score_scale, TILE_N, STAGES, False, S_MMA, O_MMA, P_OP)
        gl.thread_barrier()
        pages_a = _issue_step_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages_a, table_row, t + STAGES - 1,
                                   tile_hi, kv_len, max_blocks, num_blocks, k_head, v_head, stride_k_block,
                                   stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                                   SAME_STRIDES, COPY, PAGES_AHEAD)
        s_a, ok_a = _scores_next(q_smem, q_smem, k_ring, v_ring, v_ring, usable_smem, t + 2, STAGES - 3, STAGES,
                                 TILE_N, S_MMA, False, COPY)
        s_b, o = warpgroup_mma_wait(num_outstanding=1, deps=(s_b, o))
        o, m_i, l_i, s_a = _softmax_pv(s_b, ok_b, s_a, o, m_i, l_i, k_ring, v_ring, v_ring, t + 1, tile_hi,
                                       q_pos, score_scale, TILE_N, STAGES, False, S_MMA, O_MMA, P_OP)
        gl.thread_barrier()
        pages_b = _issue_step_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages_b, table_row, t + STAGES, tile_hi,
                                   kv_len, max_blocks, num_blocks, k_head, v_head, stride_k_block, stride_k_slot,
                                   stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES, SAME_STRIDES, COPY,
                                   PAGES_AHEAD)
        o = warpgroup_mma_init(warpgroup_mma_wait(num_outstanding=0, deps=(o,)))
    o = warpgroup_mma_wait(num_outstanding=0, deps=(o,))
    async_copy.wait_group(0)
    l_o = gl.convert_layout(l_i, ROWS)
    has_keys = l_o > 0.0
    o = o * gl.where(has_keys, 1.0 / gl.where(has_keys, l_o, 1.0), 0.0)[:, None]
    offs_m = gl.arange(0, BLOCK_M, layout=ROWS)
    head = kv_head * GROUP + offs_m % GROUP
    row_ok = (offs_m < BLOCK_M // GROUP * GROUP) & (offs_m // GROUP < q_len)
    part_rows = (segment * num_tokens + q_first + offs_m // GROUP).to(gl.int64) * NUM_Q_HEADS + head
    offs_d = gl.arange(0, D, layout=gl.SliceLayout(0, O_MMA))
    gl.store(part_ptr + (part_rows * D)[:, None] + offs_d[None, :], o, mask=row_ok[:, None])
    lse = gl.where(has_keys, gl.convert_layout(m_i, ROWS) + gl.log2(gl.where(has_keys, l_o, 1.0)), float("-inf"))
    gl.store(lse_ptr + part_rows, lse, mask=row_ok)


@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + ["q_blocks"])
def verify_ws_kernel(
    q_ptr, k_ptr, v_ptr, part_ptr, lse_ptr, cu_q_ptr, seq_lens_ptr, table_ptr,
    scale_log2, num_tokens, num_blocks, max_blocks, num_splits,
    stride_q_tok, stride_q_head, stride_k_block, stride_k_slot, stride_k_head,
    stride_v_block, stride_v_slot, stride_v_head, stride_table, q_blocks,
    NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, D: gl.constexpr, PAGE: gl.constexpr,
    TILE_N: gl.constexpr, STAGES: gl.constexpr, SAME_STRIDES: gl.constexpr, PAGES_AHEAD: gl.constexpr,
    MULTI_BLOCK: gl.constexpr, REGS: gl.constexpr,
):
    kv_head = gl.program_id(1)
    split = gl.program_id(2)
    DTYPE: gl.constexpr = q_ptr.dtype.element_ty
    Q_LOAD: gl.constexpr = gl.BlockedLayout([1, 8], [32 * 8 // D, D // 8], [WARPS, 1], [1, 0])
    Q_SMEM: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_M, D], DTYPE)
    RING_SMEM: gl.constexpr = gl.NVMMASharedLayout.get_default_for([TILE_N, D], DTYPE)
    seq, q_first, q_len, kv_len = _query_block(cu_q_ptr, seq_lens_ptr, q_blocks, BLOCK_M // GROUP, MULTI_BLOCK)
    if _no_queries(q_len, MULTI_BLOCK):
        return
    context = kv_len - q_len
    offs_q = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, Q_LOAD))
    q_rows = (q_first + offs_q // GROUP).to(gl.int64) * stride_q_tok + (kv_head * GROUP + offs_q % GROUP) * stride_q_head
    q_ok = (offs_q < BLOCK_M // GROUP * GROUP) & (offs_q // GROUP < q_len)
    q = gl.load(q_ptr + q_rows[:, None] + gl.arange(0, D, layout=gl.SliceLayout(0, Q_LOAD))[None, :],
                mask=q_ok[:, None], other=0.0)
    q_smem = gl.allocate_shared_memory(DTYPE, [BLOCK_M, D], Q_SMEM, q)
    k_ring0 = gl.allocate_shared_memory(DTYPE, [STAGES, TILE_N, D], RING_SMEM)
    v_ring0 = gl.allocate_shared_memory(DTYPE, [STAGES, TILE_N, D], RING_SMEM)
    k_ring1 = gl.allocate_shared_memory(DTYPE, [STAGES, TILE_N, D], RING_SMEM)
    v_ring1 = gl.allocate_shared_memory(DTYPE, [STAGES, TILE_N, D], RING_SMEM)
    usable0 = gl.allocate_shared_memory(gl.int8, [STAGES, TILE_N], gl.SwizzledSharedLayout(1, 1, 1, order=[0]))
    usable1 = gl.allocate_shared_memory(gl.int8, [STAGES, TILE_N], gl.SwizzledSharedLayout(1, 1, 1, order=[0]))
    fence_async_shared()
    table_row = table_ptr + seq.to(gl.int64) * stride_table
    k_head = kv_head * stride_k_head
    v_head = kv_head * stride_v_head
    gl.warp_specialize([
        (_consumer, (q_smem, k_ring0, v_ring0, usable0, k_ptr, v_ptr, part_ptr, lse_ptr, table_row, kv_len, context,
                     q_first, q_len, kv_head, 2 * split, 2 * num_splits, num_tokens, num_blocks, max_blocks,
                     stride_k_block, stride_k_slot, k_head, stride_v_block, stride_v_slot, v_head, scale_log2,
                     NUM_Q_HEADS, GROUP, D, PAGE, TILE_N, STAGES, SAME_STRIDES, PAGES_AHEAD)),
        (_consumer, (q_smem, k_ring1, v_ring1, usable1, k_ptr, v_ptr, part_ptr, lse_ptr, table_row, kv_len, context,
                     q_first, q_len, kv_head, 2 * split + 1, 2 * num_splits, num_tokens, num_blocks, max_blocks,
                     stride_k_block, stride_k_slot, k_head, stride_v_block, stride_v_slot, v_head, scale_log2,
                     NUM_Q_HEADS, GROUP, D, PAGE, TILE_N, STAGES, SAME_STRIDES, PAGES_AHEAD)),
    ], [4], [REGS])


def launch_verify_ws(q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, block_table, *, max_seqlen_q, softmax_scale,
                     tile_n, stages, splits, ahead=True, regs=240):
    """Each program runs two segments (one per warpgroup): 2 x splits partials, then the merge."""
    num_tokens, num_q_heads, head = q.shape
    num_blocks, page, num_kv_heads, _ = k_cache.shape
    group = num_q_heads // num_kv_heads
    q_blocks = -(-max_seqlen_q // (64 // group))
    part, lse = split_workspace(2 * splits, num_tokens, num_q_heads, head, out)
    verify_ws_kernel[(seq_lens.shape[0] * q_blocks, num_kv_heads, splits)](
        q, k_cache, v_cache, part, lse, cu_seqlens_q, seq_lens, block_table,
        softmax_scale * LOG2E, num_tokens, num_blocks, block_table.shape[1], splits,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), block_table.stride(0), q_blocks,
        NUM_Q_HEADS=num_q_heads, GROUP=group, D=head, PAGE=page, TILE_N=tile_n, STAGES=stages,
        SAME_STRIDES=k_cache.stride() == v_cache.stride(), PAGES_AHEAD=ahead, MULTI_BLOCK=q_blocks > 1, REGS=regs,
        num_warps=4,
    )
    launch_merge(part, lse, out)
