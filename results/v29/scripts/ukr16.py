"""v29 probe (calls 2-4; parked: the library form is on branch wip/bf16-keys-rows as
pagedattn/ops/unified_keys_rows_16bit.py): verify attention over 16-bit pages with the keys as the rows
of Q.K^T on Hopper's wgmma, in Gluon. Not routed by the profile layer; perf-notes v29.

The unified call for BF16/FP16 pages at 64 packed query rows (MTP verify: 4 draft tokens x a
16-head group). ops/verify_wgmma.py runs it with the packed rows as wgmma's M and 16 keys as N:
per 16-key tile a chain of 16 dependent m64n16 products, a softmax and one P.V, at two programs
per SM, ~1.2 us per tile and program (perf-notes §6 item 2). Here a program takes 64 keys per step
on two warpgroups (8 warps, one program per SM):

* S^T = K . Q^T: the 64 keys are wgmma's M (one warpgroup's height), the 64 packed rows its N, split
  between the warpgroups (m64n32k16, 16 steps each), K straight from the cp.async ring and Q^T from
  q's tile in shared memory; so each warpgroup's softmax runs down its own 32 columns;
* the softmax is ops/unified_keys_rows.py's lazy base: each warp's vote (any score grown past the
  running base by more than RESCALE_SLACK) goes to shared memory with P, and only a set vote moves
  the base, rescales O and l and rewrites P (a second barrier); l is kept per pair of keys a thread
  holds; a tile whose keys all precede the block's first query masks only unusable keys;
* O = P . V: the packed rows are M again (P written as [rows, keys] into shared memory), each
  warpgroup owns half of the head dimensions (m64n128k16, 4 steps), V straight from the ring as
  the N-major B operand; O is 64 fp32 registers per thread.
K/V tiles are copied with ops/verify_wgmma.py's page addressing (`_fill_ring`, `_issue_tile`,
`_tile_pages`; a step reads the page-table entries of the tile it will copy next step): page ids
outside [0, num_blocks) and entries past the table's width are masked, never copied, never
attended. KV segments are cut from each sequence's length on the device as in ops/unified.py;
segments past a sequence's keys write lse = -inf and exit; rows that see no key write 0. Rows are
stored straight from O's wgmma registers (fp32 partial rows with splits, 16-bit rows without).

Grid: (sequences x query blocks, KV heads, KV segments); a block packs 64 // GROUP query tokens
with the GROUP heads of one KV head (column c: token c // GROUP, head c % GROUP, as ops/unified.py
packs rows); MULTI_BLOCK as in ops/unified_keys_rows.py. Runs on sm90 only and never under the
Triton interpreter (Gluon kernels do not interpret).

Launch parameters and the shape property each is tied to (from `pagedattn.profiles`):
  block_m = 64  the packed rows: O = P.V's M, one warpgroup's wgmma height (fixed).
  tile_n = 64   keys per step: S^T's M, one warpgroup's height; 8 warps (two warpgroups split S^T's
                columns and O's head dimensions).
  num_stages    depth of the K/V ring: 2 x 64 x head x 2 bytes per stage (64 KB at head size 256),
                plus q (32 KB) and P (8 KB) at 64 rows: 2 stages take ~170 KB (one program per SM).
                P_IN_K_SLOT writes P into the K half of the slot being consumed (whose keys both
                warpgroups' Q.K^T has read by a CTA barrier), which frees P's 8 KB: 3 stages fit.
  num_splits    sequences x KV heads programs must fill the SMs (one program per SM).
"""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, warpgroup_mma, warpgroup_mma_wait

from pagedattn.profiles.types import LaunchProfile
from pagedattn.ops.common import LOG2E, RESCALE_SLACK, launch_merge, scale_args, split_workspace
from pagedattn.ops.gluon_common import any_warp_voted, load_scale, warp_votes
from pagedattn.ops.verify_wgmma import BATCH_SIZED_ARGS, _fill_ring, _issue_tile, _no_queries, _query_block, _segment_tiles, _tile_pages


@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + ["q_blocks"])
def unified_keys_rows_16bit_kernel(
    q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr, cu_q_ptr, seq_lens_ptr, table_ptr,
    num_tokens, num_blocks, max_blocks, num_splits,
    stride_q_tok, stride_q_head, stride_k_block, stride_k_slot, stride_k_head,
    stride_v_block, stride_v_slot, stride_v_head, stride_o_tok, stride_o_head, stride_table,
    k_scale_ptr, v_scale_ptr, softmax_scale, k_scale_value, v_scale_value, q_blocks,
    NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, HN: gl.constexpr, D: gl.constexpr, PAGE: gl.constexpr,
    TILE_N: gl.constexpr, STAGES: gl.constexpr, SPLIT: gl.constexpr, SAME_STRIDES: gl.constexpr,
    K_SCALE_TENSOR: gl.constexpr, V_SCALE_TENSOR: gl.constexpr, MULTI_BLOCK: gl.constexpr,
    P_IN_K_SLOT: gl.constexpr,
):
    KEY_WARPS: gl.constexpr = TILE_N // 16  # one warpgroup: S^T's 64 keys, 16 per warp
    HALVES: gl.constexpr = gl.num_warps() // KEY_WARPS  # warpgroups: S^T's columns and O's head dimensions split
    KV: gl.constexpr = k_ptr.dtype.element_ty
    seq, q_first, q_len, kv_len = _query_block(cu_q_ptr, seq_lens_ptr, q_blocks, HN // GROUP, MULTI_BLOCK)
    kv_head = gl.program_id(1)
    split = gl.program_id(2)
    COPY: gl.constexpr = gl.BlockedLayout([1, 8], [32 * 8 // D, D // 8], [gl.num_warps(), 1], [1, 0])
    S_MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[KEY_WARPS, HALVES],
                                                    instr_shape=[16, HN // HALVES, 16])
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

    offs_q = gl.arange(0, HN, layout=gl.SliceLayout(1, COPY))
    q_rows = (q_first + offs_q // GROUP).to(gl.int64) * stride_q_tok + (kv_head * GROUP + offs_q % GROUP) * stride_q_head
    q_ok = (offs_q < HN // GROUP * GROUP) & (offs_q // GROUP < q_len)
    q = gl.load(q_ptr + q_rows[:, None] + gl.arange(0, D, layout=gl.SliceLayout(0, COPY))[None, :],
                mask=q_ok[:, None], other=0.0)

    RING: gl.constexpr = gl.NVMMASharedLayout.get_default_for([TILE_N, D], KV)
    k_ring = gl.allocate_shared_memory(KV, [STAGES, TILE_N, D], RING)
    v_ring = gl.allocate_shared_memory(KV, [STAGES, TILE_N, D], RING)
    usable_smem = gl.allocate_shared_memory(gl.int8, [STAGES, TILE_N], FLAT)
    P_SMEM: gl.constexpr = gl.NVMMASharedLayout.get_default_for([HN, TILE_N], KV)
    if not P_IN_K_SLOT:
        p_smem = gl.allocate_shared_memory(KV, [HN, TILE_N], P_SMEM)
    votes_smem = gl.allocate_shared_memory(gl.float32, [32, gl.num_warps()], gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0]))
    table_row = table_ptr + seq.to(gl.int64) * stride_table
    k_head = kv_head * stride_k_head
    v_head = kv_head * stride_v_head
    _fill_ring(k_ptr, v_ptr, k_ring, v_ring, usable_smem, table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks,
               k_head, v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
               SAME_STRIDES, COPY)
    phys, ok = _tile_pages(table_row, tile_lo + STAGES - 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages = gl.where(ok, phys, -1)
    q_smem = gl.allocate_shared_memory(KV, [HN, D], gl.NVMMASharedLayout.get_default_for([HN, D], KV), q.to(KV))
    score_scale = softmax_scale * LOG2E * load_scale(k_scale_ptr, k_scale_value, K_SCALE_TENSOR)
    offs_c = gl.arange(0, HN, layout=COLS)
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
        s = warpgroup_mma(k_tile, q_smem.permute([1, 0]), gl.zeros([TILE_N, HN], gl.float32, S_MMA),
                          use_acc=False, is_async=True)
        usable = usable_smem.index(t % STAGES).load(KEYS) != 0
        pos = gl.where(usable, t * TILE_N + gl.arange(0, TILE_N, layout=KEYS), 2 ** 30)  # unusable keys lie past every query
        s = warpgroup_mma_wait(num_outstanding=0, deps=(s,))
        if t * TILE_N + TILE_N - 1 <= context:  # every key precedes the first query: one compare per key, not per score
            growth = gl.where(usable[:, None], gl.fma(s, score_scale, -m_i[None, :]), float("-inf"))
        else:
            growth = gl.where(pos[:, None] <= q_pos[None, :], gl.fma(s, score_scale, -m_i[None, :]),
                              float("-inf"))  # scaled s - base
        p = gl.exp2(growth)
        # warp (w, h) holds keys 16 w + r and 16 w + 8 + r (r = lane // 4) of the tile and, of its
        # half h of the columns, 8 j + 2 (lane % 4) + {0, 1}: its largest growth from registers alone
        own = gl.reshape(growth, [KEY_WARPS, 2, 8, HALVES, HN // HALVES // 8, 4, 2])
        own = gl.permute(gl.max(gl.max(gl.max(own, axis=6), axis=4), axis=1), [1, 3, 0, 2])  # [r, lane % 4, w, h]
        votes_smem.store(warp_votes(gl.reshape(own, [32, gl.num_warps()]), RESCALE_SLACK))
        if P_IN_K_SLOT:
            gl.thread_barrier()  # both warpgroups' Q.K^T have read the slot's keys
            p_smem = k_tile._reinterpret(KV, [HN, TILE_N], P_SMEM)
        p_smem.store(gl.permute(p.to(KV), [1, 0]))
        fence_async_shared()
        gl.thread_barrier()  # every warp's P columns and vote
        if any_warp_voted(votes_smem):  # the same decision in every warp
            visible = pos[:, None] <= q_pos[None, :]
            m_new = gl.maximum(m_i, gl.max(gl.where(visible, s * score_scale, float("-inf")), axis=0))
            alpha = gl.exp2(m_i - m_new)
            o = o * gl.convert_layout(alpha, ROWS)[:, None]
            l_i = l_i * gl.convert_layout(alpha, gl.SliceLayout(0, gl.SliceLayout(1, l_i.type.layout)))[None, None, :]
            m_i = m_new
            p = gl.exp2(gl.where(visible, gl.fma(s, score_scale, -m_i[None, :]), float("-inf")))
            p_smem.store(gl.permute(p.to(KV), [1, 0]))
            fence_async_shared()
            gl.thread_barrier()
        l_i = l_i + gl.sum(gl.reshape(p, [KEY_WARPS, 2, 8, HN]), axis=1)
        o = warpgroup_mma(p_smem, v_ring.index(t % STAGES), o, is_async=True)
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


def launch_unified_keys_rows_16bit(q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, block_table, *,
                                   max_seqlen_q: int, softmax_scale: float, k_scale=None, v_scale=None,
                                   profile: LaunchProfile, p_in_k_slot: bool = False) -> None:
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
    unified_keys_rows_16bit_kernel[(seq_lens.shape[0] * q_blocks, num_kv_heads, splits)](
        q, k_cache, v_cache, out, part, lse, cu_seqlens_q, seq_lens, block_table,
        num_tokens, num_blocks, block_table.shape[1], splits,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), out.stride(0), out.stride(1),
        block_table.stride(0), k_scale_t, v_scale_t, softmax_scale, k_scale_v, v_scale_v, q_blocks,
        NUM_Q_HEADS=num_q_heads, GROUP=num_q_heads // num_kv_heads, HN=profile.block_m, D=head, PAGE=page,
        TILE_N=profile.tile_n, STAGES=profile.num_stages, SPLIT=splits > 1,
        SAME_STRIDES=k_cache.stride() == v_cache.stride(), K_SCALE_TENSOR=k_is_t, V_SCALE_TENSOR=v_is_t,
        MULTI_BLOCK=q_blocks > 1, P_IN_K_SLOT=p_in_k_slot, num_warps=profile.num_warps,
    )
    if splits > 1:
        launch_merge(part, lse, out)
