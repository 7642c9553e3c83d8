"""v43 probe: FP8 verify with the packed query rows on wgmma's M (as ops/verify_wgmma.py) in a warp-specialized
program (perf-notes v43 item 2): one 4-warp producer partition copies 64-key K/V tiles (cp.async) into an e4m3 ring
and hands each over by mbarrier; two 4-warp consumer partitions take alternate tiles of the program's KV segment, each
with its own O (64 x 256 fp32), and run Q.K^T on FP8 wgmma (q as `_e4m3_pair`'s two e4m3 tiles), the softmax per row
and P.V on fp16 wgmma (P from registers, V from an fp16 copy in shared memory), with no copy and no CTA-wide barrier on
their chains. The flags (constexpr) are the forms measured:
  CONSUMER_CONVERTS  False: the producer converts each tile's V into fp16 slot j % V_SLOTS; True: each consumer
                     converts its own tile's V into its own fp16 slot (V_SLOTS = 2) while its Q.K^T runs.
  PAGES_AHEAD        the producer reads the page-table entries of the tile it copies next step, carried in registers.
  Q_IN_CONSUMER      False: q is read and split into its e4m3 tiles before the partitions split; True: consumer 0
                     does it after the split (the producer's first copies do not wait) and signals q_ready.
  SHARED_V16         with CONSUMER_CONVERTS: one fp16 slot (V_SLOTS = 1) for both consumers, taken in tile order (a
                     consumer converts after its softmax, once the other's P.V of the tile before is done, and only
                     then frees the ring slot), so a 5th ring stage fits.
  COMBINE            False: each consumer writes its own fp32 partial (2 x splits partials); True: consumer 1 hands
                     its O, m and l to consumer 0 through K's ring once the producer and consumer 0 are done with it
                     (STAGES x TILE_N >= 256), and a program writes one partial. The library's merge follows.

Barriers (count 1 each, one arrival per use, from a partition's first thread after its named barrier): full[s]
(producer -> consumer: tile in ring slot s has landed, with its usable bytes, and with CONSUMER_CONVERTS False its fp16
V), k_free[s] (consumer -> producer: slot s was read), v_free[w] (consumer -> producer: its P.V has read fp16 V slot w;
CONSUMER_CONVERTS False), q_ready, done[3] (COMBINE: producer, consumer 0, consumer 1). Tile j of the segment
(relative index) uses ring slot j % STAGES the (j // STAGES)-th time, so its phase parity is (j // STAGES) & 1.
Launch: num_warps = 4 (the default partition is consumer 0), workers [4, 4] warps with setmaxnreg
[consumer_regs, producer_regs]; the default partition gets what is left of 168 x 384 registers."""
import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared, mbarrier, warpgroup_mma, warpgroup_mma_wait,
)

from pagedattn.ops.common import LOG2E, launch_merge, scale_args
from pagedattn.ops.gluon_common import load_scale
from pagedattn.ops.verify_wgmma import (
    BATCH_SIZED_ARGS, _e4m3_pair, _issue_tile, _no_queries, _query_block, _segment_tiles, _tile_pages,
)

BLOCK_M = gl.constexpr(64)


@gluon.jit
def _stage_q(q_ptr, q_first, q_len, kv_head, stride_q_tok, stride_q_head, k_scale_ptr, softmax_scale, k_scale_value,
             q_hi_smem, q_lo_smem, row_scale_smem, GROUP: gl.constexpr, D: gl.constexpr,
             K_SCALE_TENSOR: gl.constexpr):
    """q's rows as `_e4m3_pair`'s two e4m3 tiles into shared memory, with each row's score scale (2^-k x softmax scale
    x log2(e) x k_scale); 4 warps."""
    Q_LOAD: gl.constexpr = gl.BlockedLayout([1, 8], [32 * 8 // D, D // 8], [4, 1], [1, 0])
    offs_q = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, Q_LOAD))
    q_ok = (offs_q < BLOCK_M // GROUP * GROUP) & (offs_q // GROUP < q_len)
    q_rows = (q_first + offs_q // GROUP).to(gl.int64) * stride_q_tok + \
        (kv_head * GROUP + offs_q % GROUP) * stride_q_head
    q = gl.load(q_ptr + q_rows[:, None] + gl.arange(0, D, layout=gl.SliceLayout(0, Q_LOAD))[None, :],
                mask=q_ok[:, None], other=0.0)
    q_hi, q_lo, row_down = _e4m3_pair(q.to(gl.float32))
    q_hi_smem.store(q_hi)
    q_lo_smem.store(q_lo)
    row_scale_smem.store(row_down * (softmax_scale * LOG2E * load_scale(k_scale_ptr, k_scale_value, K_SCALE_TENSOR)))
    fence_async_shared()
    gl.thread_barrier()


@gluon.jit
def _convert_v(v8, v16, TILE_N: gl.constexpr, LAYOUT: gl.constexpr):
    """A tile's e4m3 V (ring slot v8) as fp16 into v16, 16 keys at a time (32 values per thread at 4 warps)."""
    for c in gl.static_range(TILE_N // 16):
        v16.slice(16 * c, 16, dim=0).store(v8.slice(16 * c, 16, dim=0).load(LAYOUT).to(gl.float16))


@gluon.jit
def _producer(k_ptr, v_ptr, k_ring, v_ring, v16, usable_smem, full, k_free, v_free, done, table_row, tile_lo, tile_hi,
              kv_len, max_blocks, num_blocks, k_head, v_head, stride_k_block, stride_k_slot, stride_v_block,
              stride_v_slot, D: gl.constexpr, PAGE: gl.constexpr, TILE_N: gl.constexpr, STAGES: gl.constexpr,
              V_SLOTS: gl.constexpr, SAME_STRIDES: gl.constexpr, PAGES_AHEAD: gl.constexpr,
              CONSUMER_CONVERTS: gl.constexpr, COMBINE: gl.constexpr):
    COPY: gl.constexpr = gl.BlockedLayout([1, 16], [32 * 16 // D, D // 16], [4, 1], [1, 0])
    n = tile_hi - tile_lo
    for j in gl.static_range(STAGES - 1):  # the ring's first tiles: every slot is free
        phys, ok = _tile_pages(table_row, tile_lo + j, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, phys, ok, j, k_head, v_head, stride_k_block,
                    stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES, SAME_STRIDES, COPY)
    # tile STAGES - 1's page-table entries; each step reads those of the tile it will copy next step (-1: not
    # usable), so the table's latency is not on the producer's path between a conversion and the next copies
    phys, ok = _tile_pages(table_row, tile_lo + STAGES - 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages = gl.where(ok, phys, -1)
    for j in range(n):
        s = j % STAGES
        if PAGES_AHEAD:
            phys, ok = _tile_pages(table_row, tile_lo + j + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N,
                                   PAGE, COPY)
        async_copy.wait_group(STAGES - 2)  # tile j landed (this thread's copies)
        if CONSUMER_CONVERTS:
            fence_async_shared()
            gl.thread_barrier()  # every producer thread's copies of tile j landed
        else:
            if j >= V_SLOTS:  # tile j - V_SLOTS's P.V is done with its fp16 slot
                mbarrier.wait(v_free.index(j % V_SLOTS), (j // V_SLOTS - 1) & 1)
            gl.thread_barrier()  # every producer thread's copies of tile j landed
            _convert_v(v_ring.index(s), v16.index(j % V_SLOTS), TILE_N, COPY)
            fence_async_shared()
            gl.thread_barrier()
        mbarrier.arrive(full.index(s))
        if j >= 1:  # tile j - 1's Q.K^T is done with its ring slot, which tile j + STAGES - 1 takes
            mbarrier.wait(k_free.index((j - 1) % STAGES), ((j - 1) // STAGES) & 1)
        if not PAGES_AHEAD:
            phys, ok = _tile_pages(table_row, tile_lo + j + STAGES - 1, tile_hi, kv_len, max_blocks, num_blocks,
                                   TILE_N, PAGE, COPY)
            pages = gl.where(ok, phys, -1)
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, j + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
        if PAGES_AHEAD:
            pages = gl.where(ok, phys, -1)
    async_copy.wait_group(0)
    if COMBINE:
        gl.thread_barrier()
        mbarrier.arrive(done.index(0))


@gluon.jit
def _consumer(q_ptr, stride_q_tok, stride_q_head, k_scale_ptr, softmax_scale, k_scale_value, q_ready, done,
              m_smem, l_smem,
              q_hi_smem, q_lo_smem, row_scale_smem, k_ring, v_ring, v16, usable_smem, full, k_free, v_free, part_ptr,
              lse_ptr,
              v_scale_ptr, v_scale_value, tile_lo, tile_hi, context, q_first, q_len, kv_head, part_split, num_tokens,
              WHICH: gl.constexpr, NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, D: gl.constexpr,
              TILE_N: gl.constexpr, STAGES: gl.constexpr, V_SLOTS: gl.constexpr, V_SCALE_TENSOR: gl.constexpr,
              CONSUMER_CONVERTS: gl.constexpr, Q_IN_CONSUMER: gl.constexpr, K_SCALE_TENSOR: gl.constexpr,
              COMBINE: gl.constexpr, SHARED_V16: gl.constexpr):
    CONVERT: gl.constexpr = gl.BlockedLayout([1, 16], [32 * 16 // D, D // 16], [4, 1], [1, 0])
    S_MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, TILE_N, 32])
    O_MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, D, 16])
    P_OP: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=O_MMA, k_width=2)
    ROWS: gl.constexpr = gl.SliceLayout(1, O_MMA)
    S_ROWS: gl.constexpr = gl.SliceLayout(1, S_MMA)
    if Q_IN_CONSUMER:  # the producer's first copies are already in flight while q is read
        if WHICH == 0:
            _stage_q(q_ptr, q_first, q_len, kv_head, stride_q_tok, stride_q_head, k_scale_ptr, softmax_scale,
                     k_scale_value, q_hi_smem, q_lo_smem, row_scale_smem, GROUP, D, K_SCALE_TENSOR)
            mbarrier.arrive(q_ready.index(0))
        else:
            mbarrier.wait(q_ready.index(0), 0)
    score_scale = row_scale_smem.load(S_ROWS)
    q_pos = context + gl.arange(0, BLOCK_M, layout=S_ROWS) // GROUP
    o = gl.zeros([BLOCK_M, D], gl.float32, O_MMA)
    m_i = gl.full([BLOCK_M], -1.0e30, gl.float32, S_ROWS)
    l_i = gl.zeros([BLOCK_M], gl.float32, S_ROWS)
    for j in range(WHICH, tile_hi - tile_lo, 2):
        s = j % STAGES
        mbarrier.wait(full.index(s), (j // STAGES) & 1)
        k_tile = k_ring.index(s)
        sc = warpgroup_mma(q_hi_smem, k_tile.permute([1, 0]), gl.zeros([BLOCK_M, TILE_N], gl.float32, S_MMA),
                           use_acc=False, is_async=True)
        sc = warpgroup_mma(q_lo_smem, k_tile.permute([1, 0]), sc, is_async=True)
        usable = usable_smem.index(s).load(gl.SliceLayout(0, S_MMA)) != 0
        if CONSUMER_CONVERTS and not SHARED_V16:  # this consumer's fp16 slot, converted while Q.K^T runs
            _convert_v(v_ring.index(s), v16.index(WHICH), TILE_N, CONVERT)
            fence_async_shared()
        sc = warpgroup_mma_wait(num_outstanding=0, deps=(sc,))
        if not SHARED_V16:
            gl.thread_barrier()  # every warp's products, usable bytes (and conversion) read slot s
            mbarrier.arrive(k_free.index(s))
        pos = (tile_lo + j) * TILE_N + gl.arange(0, TILE_N, layout=gl.SliceLayout(0, S_MMA))
        visible = (pos[None, :] <= q_pos[:, None]) & usable[None, :]
        sc = gl.where(visible, sc * score_scale[:, None], float("-inf"))
        m_new = gl.maximum(m_i, gl.max(sc, axis=1))
        alpha = gl.exp2(m_i - m_new)
        p = gl.exp2(sc - m_new[:, None])
        l_i = l_i * alpha + gl.sum(p, axis=1)
        m_i = m_new
        p_op = gl.convert_layout(p.to(gl.float16), P_OP)
        o = o * gl.convert_layout(alpha, ROWS)[:, None]
        if SHARED_V16:  # one fp16 slot, taken in tile order: tile j - 1's P.V (the other consumer's) is done with it
            if j >= 1:
                mbarrier.wait(v_free.index(0), (j - 1) & 1)
            _convert_v(v_ring.index(s), v16.index(0), TILE_N, CONVERT)
            fence_async_shared()
            gl.thread_barrier()  # every warp's products, usable bytes and conversion read slot s
            mbarrier.arrive(k_free.index(s))
            o = warpgroup_mma(p_op, v16.index(0), o, is_async=True)
            o = warpgroup_mma_wait(num_outstanding=0, deps=(o,))
            gl.thread_barrier()
            mbarrier.arrive(v_free.index(0))
        elif CONSUMER_CONVERTS:
            o = warpgroup_mma(p_op, v16.index(WHICH), o, is_async=True)
            o = warpgroup_mma_wait(num_outstanding=0, deps=(o,))
        else:
            o = warpgroup_mma(p_op, v16.index(j % V_SLOTS), o, is_async=True)
            o = warpgroup_mma_wait(num_outstanding=0, deps=(o,))
            gl.thread_barrier()
            mbarrier.arrive(v_free.index(j % V_SLOTS))
    if COMBINE:  # consumer 1 hands its O, m and l to consumer 0 through K's ring (64 x 256 fp32: STAGES x TILE_N >=
        # 256), which writes one partial
        O_SMEM: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_M, D], gl.float32)
        o_smem = k_ring._reinterpret(gl.float32, [BLOCK_M, D], O_SMEM)  # its first 64 KB
        if WHICH == 1:
            mbarrier.wait(done.index(0), 0)  # the producer's last copies landed
            mbarrier.wait(done.index(1), 0)  # consumer 0 read its last tile
            o_smem.store(o)
            m_smem.store(m_i)
            l_smem.store(l_i)
            gl.thread_barrier()
            mbarrier.arrive(done.index(2))
        else:
            gl.thread_barrier()
            mbarrier.arrive(done.index(1))
            mbarrier.wait(done.index(2), 0)
            m_other = m_smem.load(S_ROWS)
            m_new = gl.maximum(m_i, m_other)
            own = gl.exp2(m_i - m_new)
            other = gl.exp2(m_other - m_new)
            l_i = l_i * own + l_smem.load(S_ROWS) * other
            m_i = m_new
            o = o * gl.convert_layout(own, ROWS)[:, None] + o_smem.load(O_MMA) * gl.convert_layout(other, ROWS)[:, None]
    if WHICH == 0 or not COMBINE:
        _store_partial(o, m_i, l_i, part_ptr, lse_ptr, v_scale_ptr, v_scale_value, q_first, q_len, kv_head, part_split,
                       num_tokens, NUM_Q_HEADS, GROUP, D, V_SCALE_TENSOR)


@gluon.jit
def _store_partial(o, m_i, l_i, part_ptr, lse_ptr, v_scale_ptr, v_scale_value, q_first, q_len, kv_head, part_split,
                   num_tokens, NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, D: gl.constexpr,
                   V_SCALE_TENSOR: gl.constexpr):
    """O / l (times v_scale) and m + log2(l) as fp32 partial `part_split` of the block's rows; rows without keys
    write 0 and -inf."""
    ROWS: gl.constexpr = gl.SliceLayout(1, o.type.layout)
    l_o = gl.convert_layout(l_i, ROWS)
    has_keys = l_o > 0.0
    inv_l = gl.where(has_keys, 1.0 / gl.where(has_keys, l_o, 1.0), 0.0) * load_scale(v_scale_ptr, v_scale_value,
                                                                                      V_SCALE_TENSOR)
    o = o * inv_l[:, None]
    offs_m = gl.arange(0, BLOCK_M, layout=ROWS)
    row_ok = (offs_m < BLOCK_M // GROUP * GROUP) & (offs_m // GROUP < q_len)
    part_rows = (part_split * num_tokens + q_first + offs_m // GROUP).to(gl.int64) * NUM_Q_HEADS + \
        kv_head * GROUP + offs_m % GROUP
    offs_d = gl.arange(0, D, layout=gl.SliceLayout(0, o.type.layout))
    gl.store(part_ptr + (part_rows * D)[:, None] + offs_d[None, :], o, mask=row_ok[:, None])
    lse = gl.where(has_keys, gl.convert_layout(m_i, ROWS) + gl.log2(gl.where(has_keys, l_o, 1.0)), float("-inf"))
    gl.store(lse_ptr + part_rows, lse, mask=row_ok)


@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS)
def ws_fp8_kernel(
    q_ptr, k_ptr, v_ptr, part_ptr, lse_ptr, cu_q_ptr, seq_lens_ptr, table_ptr,
    num_tokens, num_blocks, max_blocks, num_splits,
    stride_q_tok, stride_q_head, stride_k_block, stride_k_slot, stride_k_head,
    stride_v_block, stride_v_slot, stride_v_head, stride_table,
    k_scale_ptr, v_scale_ptr, softmax_scale, k_scale_value, v_scale_value,
    NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, D: gl.constexpr, PAGE: gl.constexpr,
    TILE_N: gl.constexpr, STAGES: gl.constexpr, V_SLOTS: gl.constexpr, SAME_STRIDES: gl.constexpr,
    K_SCALE_TENSOR: gl.constexpr, V_SCALE_TENSOR: gl.constexpr, CONSUMER_REGS: gl.constexpr,
    PRODUCER_REGS: gl.constexpr, PAGES_AHEAD: gl.constexpr, CONSUMER_CONVERTS: gl.constexpr,
    Q_IN_CONSUMER: gl.constexpr, COMBINE: gl.constexpr, SHARED_V16: gl.constexpr,
):
    kv_head = gl.program_id(1)
    split = gl.program_id(2)
    PARTIALS: gl.constexpr = 1 if COMBINE else 2  # fp32 partials per program: one per consumer, or combined
    Q_LOAD: gl.constexpr = gl.BlockedLayout([1, 8], [32 * 8 // D, D // 8], [4, 1], [1, 0])
    Q8_SMEM: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_M, D], gl.float8e4nv)
    RING_SMEM: gl.constexpr = gl.NVMMASharedLayout.get_default_for([TILE_N, D], gl.float8e4nv)
    V16_SMEM: gl.constexpr = gl.NVMMASharedLayout.get_default_for([TILE_N, D], gl.float16)
    FLAT: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[0])
    seq, q_first, q_len, kv_len = _query_block(cu_q_ptr, seq_lens_ptr, 1, BLOCK_M // GROUP, False)
    if _no_queries(q_len, False):
        return
    context = kv_len - q_len
    tile_lo, tile_hi = _segment_tiles(kv_len, split, num_splits, TILE_N)
    offs_q = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, Q_LOAD))
    q_ok = (offs_q < BLOCK_M // GROUP * GROUP) & (offs_q // GROUP < q_len)
    if tile_lo >= tile_hi:  # both consumers' partials: no keys
        rows = (q_first + offs_q // GROUP).to(gl.int64) * NUM_Q_HEADS + kv_head * GROUP + offs_q % GROUP
        none = gl.full([BLOCK_M], float("-inf"), gl.float32, gl.SliceLayout(1, Q_LOAD))
        for c in gl.static_range(PARTIALS):
            gl.store(lse_ptr + (PARTIALS * split + c) * num_tokens * NUM_Q_HEADS + rows, none, mask=q_ok)
        return
    q_hi_smem = gl.allocate_shared_memory(gl.float8e4nv, [BLOCK_M, D], Q8_SMEM)
    q_lo_smem = gl.allocate_shared_memory(gl.float8e4nv, [BLOCK_M, D], Q8_SMEM)
    row_scale_smem = gl.allocate_shared_memory(gl.float32, [BLOCK_M], FLAT)
    if not Q_IN_CONSUMER:
        _stage_q(q_ptr, q_first, q_len, kv_head, stride_q_tok, stride_q_head, k_scale_ptr, softmax_scale,
                 k_scale_value, q_hi_smem, q_lo_smem, row_scale_smem, GROUP, D, K_SCALE_TENSOR)
    k_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D], RING_SMEM)
    v_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D], RING_SMEM)
    v16 = gl.allocate_shared_memory(gl.float16, [V_SLOTS, TILE_N, D], V16_SMEM)
    usable_smem = gl.allocate_shared_memory(gl.int8, [STAGES, TILE_N], FLAT)
    full = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    k_free = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    v_free = gl.allocate_shared_memory(gl.int64, [V_SLOTS, 1], mbarrier.MBarrierLayout())
    q_ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(q_ready.index(0), count=1)
    done = gl.allocate_shared_memory(gl.int64, [3, 1], mbarrier.MBarrierLayout())  # producer, consumer 0, consumer 1
    for d in gl.static_range(3):
        mbarrier.init(done.index(d), count=1)
    m_smem = gl.allocate_shared_memory(gl.float32, [BLOCK_M], FLAT)  # consumer 1's m and l, for COMBINE
    l_smem = gl.allocate_shared_memory(gl.float32, [BLOCK_M], FLAT)
    for s in gl.static_range(STAGES):
        mbarrier.init(full.index(s), count=1)
        mbarrier.init(k_free.index(s), count=1)
    for w in gl.static_range(V_SLOTS):
        mbarrier.init(v_free.index(w), count=1)
    fence_async_shared()
    gl.thread_barrier()
    table_row = table_ptr + seq.to(gl.int64) * stride_table
    k_head = kv_head * stride_k_head
    v_head = kv_head * stride_v_head
    gl.warp_specialize([
        (_consumer, (q_ptr, stride_q_tok, stride_q_head, k_scale_ptr, softmax_scale, k_scale_value, q_ready,
                     done, m_smem, l_smem, q_hi_smem, q_lo_smem, row_scale_smem, k_ring, v_ring, v16, usable_smem,
                     full, k_free, v_free, part_ptr,
                     lse_ptr, v_scale_ptr, v_scale_value, tile_lo, tile_hi, context, q_first, q_len, kv_head,
                     PARTIALS * split, num_tokens, 0, NUM_Q_HEADS, GROUP, D, TILE_N, STAGES, V_SLOTS, V_SCALE_TENSOR,
                     CONSUMER_CONVERTS, Q_IN_CONSUMER, K_SCALE_TENSOR, COMBINE, SHARED_V16)),
        (_consumer, (q_ptr, stride_q_tok, stride_q_head, k_scale_ptr, softmax_scale, k_scale_value, q_ready,
                     done, m_smem, l_smem, q_hi_smem, q_lo_smem, row_scale_smem, k_ring, v_ring, v16, usable_smem,
                     full, k_free, v_free, part_ptr,
                     lse_ptr, v_scale_ptr, v_scale_value, tile_lo, tile_hi, context, q_first, q_len, kv_head,
                     PARTIALS * split + 1, num_tokens, 1, NUM_Q_HEADS, GROUP, D, TILE_N, STAGES, V_SLOTS,
                     V_SCALE_TENSOR,
                     CONSUMER_CONVERTS, Q_IN_CONSUMER, K_SCALE_TENSOR, COMBINE, SHARED_V16)),
        (_producer, (k_ptr, v_ptr, k_ring, v_ring, v16, usable_smem, full, k_free, v_free, done, table_row, tile_lo,
                     tile_hi, kv_len, max_blocks, num_blocks, k_head, v_head, stride_k_block, stride_k_slot,
                     stride_v_block, stride_v_slot, D, PAGE, TILE_N, STAGES, V_SLOTS, SAME_STRIDES, PAGES_AHEAD,
                     CONSUMER_CONVERTS, COMBINE)),
    ], [4, 4], [CONSUMER_REGS, PRODUCER_REGS])


def launch_ws_fp8(q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, block_table, *, max_seqlen_q: int,
                  softmax_scale: float, k_scale=None, v_scale=None, tile_n=64, stages=4, v_slots=2, splits=128,
                  consumer_regs=216, producer_regs=72, pages_ahead=True,
                  consumer_converts=False, q_in_consumer=False, combine=False,
                  shared_v16=False) -> None:
    """One query block of at most 64 packed rows per sequence (max_seqlen_q x group <= 64); 2 x splits partials,
    then the library's merge."""
    num_tokens, num_q_heads, head = q.shape
    num_blocks, page, num_kv_heads, _ = k_cache.shape
    group = num_q_heads // num_kv_heads
    assert not combine or stages * tile_n >= 256  # K's ring holds consumer 1's 64 x 256 fp32 O
    assert v_slots == (1 if shared_v16 else 2) or not consumer_converts  # one fp16 V slot per consumer, or one shared
    assert consumer_converts or not shared_v16
    assert max_seqlen_q * group <= 64 and head == 256
    partials = (1 if combine else 2) * splits  # always merged, even one partial (split_workspace would hand out `out`)
    part = torch.empty(partials, num_tokens, num_q_heads, head, dtype=torch.float32, device=out.device)
    lse = torch.empty(partials, num_tokens, num_q_heads, dtype=torch.float32, device=out.device)
    k_scale_t, k_scale_v, k_is_t = scale_args(k_scale)
    v_scale_t, v_scale_v, v_is_t = scale_args(v_scale)
    ws_fp8_kernel[(seq_lens.shape[0], num_kv_heads, splits)](
        q, k_cache, v_cache, part, lse, cu_seqlens_q, seq_lens, block_table,
        num_tokens, num_blocks, block_table.shape[1], splits,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), block_table.stride(0),
        k_scale_t, v_scale_t, softmax_scale, k_scale_v, v_scale_v,
        NUM_Q_HEADS=num_q_heads, GROUP=group, D=head, PAGE=page, TILE_N=tile_n, STAGES=stages, V_SLOTS=v_slots,
        SAME_STRIDES=k_cache.stride() == v_cache.stride(), K_SCALE_TENSOR=k_is_t, V_SCALE_TENSOR=v_is_t,
        CONSUMER_REGS=consumer_regs, PRODUCER_REGS=producer_regs, PAGES_AHEAD=pages_ahead,
        CONSUMER_CONVERTS=consumer_converts, Q_IN_CONSUMER=q_in_consumer, COMBINE=combine, SHARED_V16=shared_v16,
        num_warps=4,
    )
    launch_merge(part, lse, out)
