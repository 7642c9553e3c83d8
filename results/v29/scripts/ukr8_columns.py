"""v29 call 6 probe: results/v29/scripts/ukr16.py's layout (two warpgroups split S^T's 64 packed columns and O's
head dimensions; 64 keys per step, one program per SM) for FP8 pages, against ops/unified_keys_rows.py (two
warpgroups split 128 keys, O^T = V^T.P^T with V converted in registers):
* S^T = K.Q^T on FP8 wgmma with q as ops/verify_wgmma.py's two e4m3 tiles (`_e4m3_pair`), m64n32k32, 8 steps
  each; 2^-k per column, the softmax scale and k_scale scale the scores per column;
* V is converted once per tile into an fp16 [keys, head] tile in shared memory (every thread 64 values),
  before the softmax's barrier, and O = P.V reads it as the N-major B operand (FP8 wgmma reads only K-major
  operands); v_scale scales the output.
Shared memory: stages x 32 KB (K, V) + 32 KB (q's two tiles) + 32 KB (fp16 V) + 8 KB (P): 137 KB at 2
stages, 169 at 3, 201 at 4."""


from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, warpgroup_mma, warpgroup_mma_wait

from pagedattn.profiles.types import LaunchProfile
from pagedattn.ops.common import LOG2E, RESCALE_SLACK, launch_merge, scale_args, split_workspace
from pagedattn.ops.gluon_common import any_warp_voted, load_scale, warp_votes
from pagedattn.ops.verify_wgmma import (
    BATCH_SIZED_ARGS, _e4m3_pair, _fill_ring, _issue_tile, _no_queries, _query_block, _segment_tiles, _tile_pages,
)


@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + ["q_blocks"])
def unified_keys_rows_fp8_columns_kernel(
    q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr, cu_q_ptr, seq_lens_ptr, table_ptr,
    num_tokens, num_blocks, max_blocks, num_splits,
    stride_q_tok, stride_q_head, stride_k_block, stride_k_slot, stride_k_head,
    stride_v_block, stride_v_slot, stride_v_head, stride_o_tok, stride_o_head, stride_table,
    k_scale_ptr, v_scale_ptr, softmax_scale, k_scale_value, v_scale_value, q_blocks,
    NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, HN: gl.constexpr, D: gl.constexpr, PAGE: gl.constexpr,
    TILE_N: gl.constexpr, STAGES: gl.constexpr, SPLIT: gl.constexpr, SAME_STRIDES: gl.constexpr,
    K_SCALE_TENSOR: gl.constexpr, V_SCALE_TENSOR: gl.constexpr, MULTI_BLOCK: gl.constexpr,
):
    KEY_WARPS: gl.constexpr = TILE_N // 16  # one warpgroup: S^T's 64 keys, 16 per warp
    HALVES: gl.constexpr = gl.num_warps() // KEY_WARPS  # warpgroups: S^T's columns and O's head dimensions split
    seq, q_first, q_len, kv_len = _query_block(cu_q_ptr, seq_lens_ptr, q_blocks, HN // GROUP, MULTI_BLOCK)
    kv_head = gl.program_id(1)
    split = gl.program_id(2)
    COPY: gl.constexpr = gl.BlockedLayout([1, 16], [32 * 16 // D, D // 16], [gl.num_warps(), 1], [1, 0])
    Q_LOAD: gl.constexpr = gl.BlockedLayout([1, 8], [32 * 8 // D, D // 8], [gl.num_warps(), 1], [1, 0])
    S_MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[KEY_WARPS, HALVES],
                                                    instr_shape=[16, HN // HALVES, 32])
    O_MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[KEY_WARPS, HALVES],
                                                    instr_shape=[16, D // HALVES, 16])
    KEYS: gl.constexpr = gl.SliceLayout(1, S_MMA)
    COLS: gl.constexpr = gl.SliceLayout(0, S_MMA)
    ROWS: gl.constexpr = gl.SliceLayout(1, O_MMA)
    FLAT: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[0])

    if _no_queries(q_len, MULTI_BLOCK):
        return
    context = kv_len - q_len  # absolute position of the block's first query
    tile_lo, tile_hi = _segment_tiles(kv_len, split, num_splits, TILE_N)

    offs_r = gl.arange(0, HN, layout=ROWS)
    row_ok = (offs_r < HN // GROUP * GROUP) & (offs_r // GROUP < q_len)
    part_rows = (split * num_tokens + q_first + offs_r // GROUP).to(gl.int64) * NUM_Q_HEADS + kv_head * GROUP + \
        offs_r % GROUP
    if SPLIT:
        if tile_lo >= tile_hi:  # segment starts past this sequence's keys
            gl.store(lse_ptr + part_rows, gl.full([HN], float("-inf"), gl.float32, ROWS), mask=row_ok)
            return

    offs_q = gl.arange(0, HN, layout=gl.SliceLayout(1, Q_LOAD))
    q_rows = (q_first + offs_q // GROUP).to(gl.int64) * stride_q_tok + (kv_head * GROUP + offs_q % GROUP) * stride_q_head
    q_ok = (offs_q < HN // GROUP * GROUP) & (offs_q // GROUP < q_len)
    q = gl.load(q_ptr + q_rows[:, None] + gl.arange(0, D, layout=gl.SliceLayout(0, Q_LOAD))[None, :],
                mask=q_ok[:, None], other=0.0)

    k_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D],
                                       gl.NVMMASharedLayout.get_default_for([TILE_N, D], gl.float8e4nv))
    v_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D], gl.SwizzledSharedLayout(16, 1, 8, order=[1, 0]))
    V16: gl.constexpr = gl.NVMMASharedLayout.get_default_for([TILE_N, D], gl.float16)
    v16_smem = gl.allocate_shared_memory(gl.float16, [TILE_N, D], V16)
    CONVERT: gl.constexpr = gl.BlockedLayout([1, 16], [32 * 16 // D, D // 16], [gl.num_warps(), 1], [1, 0])
    usable_smem = gl.allocate_shared_memory(gl.int8, [STAGES, TILE_N], FLAT)
    p_smem = gl.allocate_shared_memory(gl.float16, [HN, TILE_N], gl.NVMMASharedLayout.get_default_for([HN, TILE_N], gl.float16))
    votes_smem = gl.allocate_shared_memory(gl.float32, [32, gl.num_warps()], gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0]))
    table_row = table_ptr + seq.to(gl.int64) * stride_table
    k_head = kv_head * stride_k_head
    v_head = kv_head * stride_v_head
    _fill_ring(k_ptr, v_ptr, k_ring, v_ring, usable_smem, table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks,
               k_head, v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
               SAME_STRIDES, COPY)
    phys, ok = _tile_pages(table_row, tile_lo + STAGES - 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages = gl.where(ok, phys, -1)
    q_hi, q_lo, down = _e4m3_pair(q.to(gl.float32))
    Q_SMEM: gl.constexpr = gl.NVMMASharedLayout.get_default_for([HN, D], gl.float8e4nv)
    q_hi_smem = gl.allocate_shared_memory(gl.float8e4nv, [HN, D], Q_SMEM, q_hi)
    q_lo_smem = gl.allocate_shared_memory(gl.float8e4nv, [HN, D], Q_SMEM, q_lo)
    offs_c = gl.arange(0, HN, layout=COLS)
    col_scale = gl.convert_layout(down, COLS) * (softmax_scale * LOG2E
                                                 * load_scale(k_scale_ptr, k_scale_value, K_SCALE_TENSOR))
    col_ok = (offs_c < HN // GROUP * GROUP) & (offs_c // GROUP < q_len)
    q_pos = gl.where(col_ok, context + offs_c // GROUP, -1)  # padding columns see no key

    o = gl.zeros([HN, D], gl.float32, O_MMA)
    m_i = gl.where(col_ok, -1.0e30, 0.0)  # padding columns (q = 0, s = 0) start at base 0
    l_i = gl.sum(gl.reshape(gl.zeros([TILE_N, HN], gl.float32, S_MMA), [KEY_WARPS, 2, 8, HN]), axis=1)
    for t in range(tile_lo, tile_hi):
        async_copy.wait_group(STAGES - 2)
        gl.thread_barrier()  # tile t landed for every warp; all are done with tile t - 1's slot and P
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, t + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
        phys, ok = _tile_pages(table_row, t + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        pages = gl.where(ok, phys, -1)
        fence_async_shared()
        k_tile = k_ring.index(t % STAGES)
        s = warpgroup_mma(k_tile, q_hi_smem.permute([1, 0]), gl.zeros([TILE_N, HN], gl.float32, S_MMA),
                          use_acc=False, is_async=True)
        s = warpgroup_mma(k_tile, q_lo_smem.permute([1, 0]), s, is_async=True)
        v_raw = v_ring.index(t % STAGES).load(CONVERT)
        usable = usable_smem.index(t % STAGES).load(KEYS) != 0
        pos = gl.where(usable, t * TILE_N + gl.arange(0, TILE_N, layout=KEYS), 2 ** 30)  # unusable keys lie past every query
        s = warpgroup_mma_wait(num_outstanding=0, deps=(s,))
        if t * TILE_N + TILE_N - 1 <= context:  # every key precedes the first query: one compare per key, not per score
            growth = gl.where(usable[:, None], gl.fma(s, col_scale[None, :], -m_i[None, :]), float("-inf"))
        else:
            growth = gl.where(pos[:, None] <= q_pos[None, :], gl.fma(s, col_scale[None, :], -m_i[None, :]),
                              float("-inf"))  # scaled s - base
        p = gl.exp2(growth)
        # warp (w, h) holds keys 16 w + r and 16 w + 8 + r (r = lane // 4) of the tile and, of its
        # half h of the columns, 8 j + 2 (lane % 4) + {0, 1}: its largest growth from registers alone
        own = gl.reshape(growth, [KEY_WARPS, 2, 8, HALVES, HN // HALVES // 8, 4, 2])
        own = gl.permute(gl.max(gl.max(gl.max(own, axis=6), axis=4), axis=1), [1, 3, 0, 2])  # [r, lane % 4, w, h]
        votes_smem.store(warp_votes(gl.reshape(own, [32, gl.num_warps()]), RESCALE_SLACK))
        p_smem.store(gl.permute(p.to(gl.float16), [1, 0]))
        v16_smem.store(v_raw.to(gl.float16))
        fence_async_shared()
        gl.thread_barrier()  # every warp's P columns, vote and fp16 V
        if any_warp_voted(votes_smem):  # the same decision in every warp
            visible = pos[:, None] <= q_pos[None, :]
            m_new = gl.maximum(m_i, gl.max(gl.where(visible, s * col_scale[None, :], float("-inf")), axis=0))
            alpha = gl.exp2(m_i - m_new)
            o = o * gl.convert_layout(alpha, ROWS)[:, None]
            l_i = l_i * gl.convert_layout(alpha, gl.SliceLayout(0, gl.SliceLayout(1, l_i.type.layout)))[None, None, :]
            m_i = m_new
            p = gl.exp2(gl.where(visible, gl.fma(s, col_scale[None, :], -m_i[None, :]), float("-inf")))
            p_smem.store(gl.permute(p.to(gl.float16), [1, 0]))
            fence_async_shared()
            gl.thread_barrier()
        l_i = l_i + gl.sum(gl.reshape(p, [KEY_WARPS, 2, 8, HN]), axis=1)
        o = warpgroup_mma(p_smem, v16_smem, o, is_async=True)
        o = warpgroup_mma_wait(num_outstanding=0, deps=(o,))
    async_copy.wait_group(0)

    l_sum = gl.convert_layout(gl.sum(gl.sum(l_i, axis=1), axis=0), ROWS)
    has_keys = l_sum > 0.0
    v_scale = load_scale(v_scale_ptr, v_scale_value, V_SCALE_TENSOR)
    o = o * gl.where(has_keys, v_scale / gl.where(has_keys, l_sum, 1.0), 0.0)[:, None]
    offs_d = gl.arange(0, D, layout=gl.SliceLayout(0, O_MMA))
    # rows stored straight from O's wgmma registers: each thread holds pairs of consecutive head dimensions
    if SPLIT:
        gl.store(part_ptr + part_rows[:, None] * D + offs_d[None, :], o, mask=row_ok[:, None])
        lse = gl.where(has_keys, gl.convert_layout(m_i, ROWS) + gl.log2(gl.where(has_keys, l_sum, 1.0)),
                       float("-inf"))
        gl.store(lse_ptr + part_rows, lse, mask=row_ok)
    else:
        rows = (q_first + offs_r // GROUP).to(gl.int64) * stride_o_tok + (kv_head * GROUP + offs_r % GROUP) * stride_o_head
        gl.store(out_ptr + rows[:, None] + offs_d[None, :], o.to(out_ptr.dtype.element_ty), mask=row_ok[:, None])


def launch_fp8_columns(q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, block_table, *,
                                   max_seqlen_q: int, softmax_scale: float, k_scale=None, v_scale=None,
                                   profile: LaunchProfile) -> None:
    """Launch with the given profile (its stages and splits); decides nothing. Each sequence gets
    cdiv(max_seqlen_q, 64 // group) query blocks."""
    num_tokens, num_q_heads, head = q.shape
    num_blocks, page, num_kv_heads, _ = k_cache.shape
    splits = profile.num_splits
    if num_tokens == 0:
        return
    q_blocks = profile.query_blocks(num_q_heads // num_kv_heads, max_seqlen_q)
    part, lse = split_workspace(splits, num_tokens, num_q_heads, head, out)
    k_scale_t, k_scale_v, k_is_t = scale_args(k_scale)
    v_scale_t, v_scale_v, v_is_t = scale_args(v_scale)
    unified_keys_rows_fp8_columns_kernel[(seq_lens.shape[0] * q_blocks, num_kv_heads, splits)](
        q, k_cache, v_cache, out, part, lse, cu_seqlens_q, seq_lens, block_table,
        num_tokens, num_blocks, block_table.shape[1], splits,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), out.stride(0), out.stride(1),
        block_table.stride(0), k_scale_t, v_scale_t, softmax_scale, k_scale_v, v_scale_v, q_blocks,
        NUM_Q_HEADS=num_q_heads, GROUP=num_q_heads // num_kv_heads, HN=profile.block_m, D=head, PAGE=page,
        TILE_N=profile.tile_n, STAGES=profile.num_stages, SPLIT=splits > 1,
        SAME_STRIDES=k_cache.stride() == v_cache.stride(), K_SCALE_TENSOR=k_is_t, V_SCALE_TENSOR=v_is_t,
        MULTI_BLOCK=q_blocks > 1, num_warps=profile.num_warps,
    )
    if splits > 1:
        launch_merge(part, lse, out)
