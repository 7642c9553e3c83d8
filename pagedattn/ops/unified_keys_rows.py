"""Decode and verify attention over FP8 pages with the keys as the rows of Hopper's wgmma, in Gluon.

The unified call for FP8 pages at head size 256, decode and verify. The warpgroup-MMA verify
kernel (ops/verify_wgmma.py) puts the 64 packed query rows on wgmma's M and 16 keys on its N, so
each 16-key tile costs one Q.K^T / softmax / P.V chain of ~1.1 us per program and reads both of q's
e4m3 tiles from shared memory again (perf-notes §6 items 1 and 3). Here the keys are the rows, as
in ops/sparse_keys_rows.py, and the packed query rows are N:

* S^T = K . Q^T on FP8 wgmma, 64 keys per warpgroup and step (128 on two warpgroups, or 64 on one),
  K straight from the cp.async ring, q as ops/verify_wgmma.py's two e4m3 tiles (`_e4m3_pair`) read
  once per step; 2^-k per packed row, the softmax scale and k_scale scale the scores per column.
  At 16 packed rows the two tiles are the 32 columns of one product (PACK_TERMS), so each k-step
  reads the K tile from shared memory once, not once per term; columns c and 16 + c land in the
  same thread and are added after the wait (perf-notes v51 item 1: 0.985x the time at q=1). At 32
  and 64 rows each term keeps its own product (the 128-column one took 1.02-1.03x at 64 rows);
* the softmax runs down the keys with ops/sparse_keys_rows.py's lazy base: each warp's vote
  (whether any of its scores grew past the running base by more than RESCALE_SLACK, one
  `vote.sync`, `gluon_common.warp_votes`) goes to shared memory with P^T, and only a set vote moves
  the base, rescales O and l and rewrites P^T (a second barrier). The scaled
  score minus the base is one FFMA; a tile whose keys all precede the sequence's first query masks
  only unusable keys (one compare per key, not per score), so padding columns start at base 0
  (their scores are 0) rather than force a rescale there; l is kept per pair of keys a thread holds
  (half the registers of per-key sums; perf-notes v17 items 2-3);
* O^T = V^T . P^T on fp16 wgmma, V converted in registers as the A operand (int16 pairs of e4m3
  values, ops/gluon_common.py's `fp8_pairs_to_fp16`), so O^T splits into even and odd head
  dimensions; with two warpgroups each owns half of each (64 fp32 registers per thread at 64 packed
  rows), one warpgroup owns both (64 registers at 32 rows); 32 keys of V at a time.
K/V tiles are copied with ops/verify_wgmma.py's page addressing and ring prologue (`_tile_pages`,
`_issue_tile`, `_fill_ring`), each step reading the page-table entries of the tile it will copy
next step (carried in registers, so the table's L2 read is not waited for between a tile's landing
and the next copies: 2-5 % less time, perf-notes v16 item 4), at the top of the step, before its
wait and barrier (read after them, ptxas issued the loads after the step's copies: 1.06x the time
at 16 packed rows, perf-notes v38 item 1): page ids outside [0, num_blocks) and entries past the
table's width are masked, never copied, never attended; a byte per ring key says which keys are
usable. KV segments are cut from each sequence's length on the device as in ops/unified.py; segments past a
sequence's keys write lse = -inf and exit; rows that see no key write 0. The sequence's length is
read with its query bounds, before the empty-sequence exit, so the three take one round trip; q is
read before the first tile's copies and converted after them (perf-notes v17 item 2), with the first
tile's and the first loop step's page-table entries, and a barrier keeps all of them ahead of the copies
(without it ptxas issues them after the copies, where they wait behind the tile's bytes: perf-notes v44
item 6). With splits, the fp32 partial rows are stored straight from O^T's wgmma
registers, one 8-byte store per pair of head dimensions, instead of through a layout change in
shared memory (perf-notes v27 item 3: the stores took 2.8 instead of 6.6 us per 64-row program,
8 % of the q=4 long request's time); a single pass writes its 16-bit rows through the layout
change, whose 16-byte stores need fewer registers.

Grid: (sequences x query blocks, KV heads, KV segments). A block holds block_m // GROUP query
tokens and each sequence gets cdiv(max_seqlen_q, block_m // GROUP) blocks; column c of a block is
its token c // GROUP, head c % GROUP, as ops/unified.py packs rows. Blocks past a sequence's
queries exit; every block reads the sequence's keys up to its length (the causal mask hides those
past the block's last query: at most max_seqlen_q - 1 keys, within one tile). With one block per
sequence the launcher sets MULTI_BLOCK False, which builds the same code as before blocks existed
(offline SASS check, perf-notes v20 item 1: the block index and the `<= 0` exit test cost 1-3 %
where they are not needed). The profile layer routes here only FP8 pages, head size 256, no
sliding window, softcap or sinks (`select.unified_keys_rows_problem`); it runs on sm90 only and
never under the Triton interpreter (Gluon kernels do not interpret), so the CPU suite tests its
build offline and the GPU suite its results.

Launch parameters and the shape property each is tied to (from `pagedattn.profiles`):
  block_m (N)   the packed query rows: GROUP x max_seqlen_q rounded up to a power of two, 16 to 64
                on two warpgroups, 16 to 32 on one (wgmma's N; O^T's fp32 registers per thread are
                256 x block_m / threads: 64 at the most); more rows than that run in several blocks.
  tile_n        keys per step, 16 per warp (each warp's rows of S^T): 128 with num_warps = 8 (two
                warpgroups split the keys for the scores and O^T's head dimension) or 64 with
                num_warps = 4 (one warpgroup does both: at 16 packed rows 150 registers and 76 KB,
                so three programs share an SM, each with its own barriers; perf-notes v19 item 1:
                6-11 % less time than 128 keys on FP8 batch decode at 32,768 keys).
  registers     the build's cap (ptxas' maxnreg, `select.keys_rows_register_cap`): where shared memory
                lets more programs share an SM than the uncapped build's registers would, registers
                are capped to hold them: 168 for the 16-row one-warpgroup form at 2 stages, which
                builds at 150 under it since v51's packed terms (174 uncapped before, 168 capped).
  head size 256 O^T's even and odd halves (128 rows each).
  num_stages    depth of the K/V ring (>= 2). Shared memory = 2 x block_m x 256 (q's e4m3 tiles) +
                stages x tile_n x 256 x 2 (K, V) + stages x tile_n (usable keys) + tile_n x block_m x
                2 (P^T) + 4 x warps x (32 + block_m) (votes, one per thread; the column reductions'
                scratch): 183,552 B at 64 packed rows, 128 keys and 2 stages (one program per SM);
                3 stages of 128 keys fit up to 32 rows (measured 4-6 % slower than 2 at 16 rows,
                perf-notes v16 items 3-4).
  num_splits    sequences x KV heads programs must fill the SMs' program slots (one per SM with 128
                keys, two or three with 64).
"""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, warpgroup_mma, warpgroup_mma_wait

from ..device import DeviceInfo
from ..profiles.select import keys_rows_register_cap
from ..profiles.types import LaunchProfile
from .common import LOG2E, RESCALE_SLACK, launch_merge, scale_args, split_workspace
from .gluon_common import any_warp_voted, fp8_pairs_to_fp16, interleaved_rows, load_scale, scaled_halves, warp_votes
from .verify_wgmma import (
    BATCH_SIZED_ARGS, _e4m3_pair, _fill_ring, _issue_tile, _no_queries, _query_block, _segment_tiles, _tile_pages,
)

CHUNK = gl.constexpr(32)  # keys of V converted and multiplied at a time (perf-notes v16 item 4)


@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + ["q_blocks"])
def unified_keys_rows_kernel(
    q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr, cu_q_ptr, seq_lens_ptr, table_ptr,
    num_tokens, num_blocks, max_blocks, num_splits,
    stride_q_tok, stride_q_head, stride_k_block, stride_k_slot, stride_k_head,
    stride_v_block, stride_v_slot, stride_v_head, stride_o_tok, stride_o_head, stride_table,
    k_scale_ptr, v_scale_ptr, softmax_scale, k_scale_value, v_scale_value, q_blocks,
    NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, HN: gl.constexpr, D: gl.constexpr, PAGE: gl.constexpr,
    TILE_N: gl.constexpr, STAGES: gl.constexpr, SPLIT: gl.constexpr, SAME_STRIDES: gl.constexpr,
    K_SCALE_TENSOR: gl.constexpr, V_SCALE_TENSOR: gl.constexpr, MULTI_BLOCK: gl.constexpr,
):
    WARPS: gl.constexpr = TILE_N // 16  # each warp's 16 keys of a step are its rows of S^T
    # q_first, q_len and context are the query block's: its first token, the queries from it on, its position
    seq, q_first, q_len, kv_len = _query_block(cu_q_ptr, seq_lens_ptr, q_blocks, HN // GROUP, MULTI_BLOCK)
    kv_head = gl.program_id(1)
    split = gl.program_id(2)
    COPY: gl.constexpr = gl.BlockedLayout([1, 16], [32 * 16 // D, D // 16], [WARPS, 1], [1, 0])
    Q_LOAD: gl.constexpr = gl.BlockedLayout([1, 8], [32 * 8 // D, D // 8], [WARPS, 1], [1, 0])
    S_MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[WARPS, 1], instr_shape=[16, HN, 32])
    # at 16 packed rows q's two e4m3 terms are the 2 x HN columns of one product (perf-notes v51 item 1)
    PACK_TERMS: gl.constexpr = HN == 16
    S_TERMS: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[WARPS, 1],
                                                      instr_shape=[16, 2 * HN, 32])
    O_MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[WARPS, 1], instr_shape=[16, HN, 16])
    V_OP: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=O_MMA, k_width=2)
    KEYS: gl.constexpr = gl.SliceLayout(1, S_MMA)
    COLS: gl.constexpr = gl.SliceLayout(0, S_MMA)
    FLAT: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[0])

    if _no_queries(q_len, MULTI_BLOCK):
        return
    context = kv_len - q_len  # absolute position of the block's first query
    tile_lo, tile_hi = _segment_tiles(kv_len, split, num_splits, TILE_N)

    offs_c = gl.arange(0, HN, layout=COLS)
    col_ok = (offs_c < HN // GROUP * GROUP) & (offs_c // GROUP < q_len)
    part_cols = (split * num_tokens + q_first + offs_c // GROUP).to(gl.int64) * NUM_Q_HEADS + kv_head * GROUP + \
        offs_c % GROUP
    if SPLIT:
        if tile_lo >= tile_hi:  # segment starts past this sequence's keys
            gl.store(lse_ptr + part_cols, gl.full([HN], float("-inf"), gl.float32, COLS), mask=col_ok)
            return

    offs_q = gl.arange(0, HN, layout=gl.SliceLayout(1, Q_LOAD))
    q_rows = (q_first + offs_q // GROUP).to(gl.int64) * stride_q_tok + (kv_head * GROUP + offs_q % GROUP) * stride_q_head
    q_ok = (offs_q < HN // GROUP * GROUP) & (offs_q // GROUP < q_len)
    # q is read before the first tile's copies (the barrier before them below) and converted after them
    q = gl.load(q_ptr + q_rows[:, None] + gl.arange(0, D, layout=gl.SliceLayout(0, Q_LOAD))[None, :],
                mask=q_ok[:, None], other=0.0)

    k_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D],
                                       gl.NVMMASharedLayout.get_default_for([TILE_N, D], gl.float8e4nv))
    v_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D], gl.SwizzledSharedLayout(16, 1, 8, order=[1, 0]))
    v_pairs = v_ring._reinterpret(gl.int16, [STAGES, TILE_N, D // 2], gl.SwizzledSharedLayout(8, 1, 8, order=[1, 0]))
    usable_smem = gl.allocate_shared_memory(gl.int8, [STAGES, TILE_N], FLAT)
    p_smem = gl.allocate_shared_memory(gl.float16, [TILE_N, HN],
                                       gl.NVMMASharedLayout.get_default_for([TILE_N, HN], gl.float16))
    # each thread's copy of its warp's vote
    votes_smem = gl.allocate_shared_memory(gl.float32, [32, WARPS], gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0]))
    table_row = table_ptr + seq.to(gl.int64) * stride_table
    k_head = kv_head * stride_k_head
    v_head = kv_head * stride_v_head
    # q's rows, the first tile's page-table entries and the first loop step's (each step then reads the next
    # step's, -1: not usable) are all asked for before the first copy, and the barrier keeps them there: ptxas
    # otherwise issues q's and the step's loads after the tile's copies, where they wait behind its bytes
    # (perf-notes v44 item 6: 0.977x / 0.978x the time at q = 1 / 4 on the H200)
    phys, ok = _tile_pages(table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    phys_next, ok_next = _tile_pages(table_row, tile_lo + STAGES - 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N,
                                     PAGE, COPY)
    gl.thread_barrier()
    _fill_ring(k_ptr, v_ptr, k_ring, v_ring, usable_smem, phys, ok, table_row, tile_lo, tile_hi, kv_len, max_blocks,
               num_blocks, k_head, v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D,
               PAGE, STAGES, SAME_STRIDES, COPY)
    pages = gl.where(ok_next, phys_next, -1)

    q_hi, q_lo, down = _e4m3_pair(q.to(gl.float32))
    if PACK_TERMS:  # hi's rows, then lo's: column c of the product is hi's score, column HN + c lo's
        q_smem = gl.allocate_shared_memory(gl.float8e4nv, [2 * HN, D],
                                           gl.NVMMASharedLayout.get_default_for([2 * HN, D], gl.float8e4nv))
        q_smem.slice(0, HN, dim=0).store(q_hi)
        q_smem.slice(HN, HN, dim=0).store(q_lo)
    else:
        Q_SMEM: gl.constexpr = gl.NVMMASharedLayout.get_default_for([HN, D], gl.float8e4nv)
        q_hi_smem = gl.allocate_shared_memory(gl.float8e4nv, [HN, D], Q_SMEM, q_hi)
        q_lo_smem = gl.allocate_shared_memory(gl.float8e4nv, [HN, D], Q_SMEM, q_lo)
    col_scale = gl.convert_layout(down, COLS) * (softmax_scale * LOG2E
                                                 * load_scale(k_scale_ptr, k_scale_value, K_SCALE_TENSOR))
    q_pos = gl.where(col_ok, context + offs_c // GROUP, -1)  # padding columns see no key

    o_even = gl.zeros([D // 2, HN], gl.float32, O_MMA)
    o_odd = gl.zeros([D // 2, HN], gl.float32, O_MMA)
    # padding columns (q = 0, so s = 0) start at base 0: growth 0 on the tiles that skip the causal compare
    m_i = gl.where(col_ok, -1.0e30, 0.0)
    # row sums per pair of keys a thread holds (keys 16w + j and 16w + 8 + j of warp w): half the registers
    l_i = gl.sum(gl.reshape(gl.zeros([TILE_N, HN], gl.float32, S_MMA), [WARPS, 2, TILE_N // WARPS // 2, HN]), axis=1)
    for t in range(tile_lo, tile_hi):
        # the next step's entries read before the wait: ptxas would issue them after this step's copies,
        # which cost the 16-row form 5 % (perf-notes v38 item 1)
        phys, ok = _tile_pages(table_row, t + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        async_copy.wait_group(STAGES - 2)
        gl.thread_barrier()  # tile t landed for every warp; all are done with tile t - 1's slot and P^T
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, t + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
        pages = gl.where(ok, phys, -1)
        fence_async_shared()
        k_tile = k_ring.index(t % STAGES)
        if PACK_TERMS:  # one chain reads the K tile once for both terms
            s = warpgroup_mma(k_tile, q_smem.permute([1, 0]), gl.zeros([TILE_N, 2 * HN], gl.float32, S_TERMS),
                              use_acc=False, is_async=True)
        else:
            s = warpgroup_mma(k_tile, q_hi_smem.permute([1, 0]), gl.zeros([TILE_N, HN], gl.float32, S_MMA),
                              use_acc=False, is_async=True)
            s = warpgroup_mma(k_tile, q_lo_smem.permute([1, 0]), s, is_async=True)
        v_slot = v_pairs.index(t % STAGES)
        raw = v_slot.slice(0, CHUNK, dim=0).permute([1, 0]).load(V_OP)
        usable = usable_smem.index(t % STAGES).load(KEYS) != 0
        pos = gl.where(usable, t * TILE_N + gl.arange(0, TILE_N, layout=KEYS), 2 ** 30)  # unusable keys lie past every query
        s = warpgroup_mma_wait(num_outstanding=0, deps=(s,))
        if PACK_TERMS:  # columns c and HN + c sit in the same thread: the sum needs no data movement
            s = gl.convert_layout(gl.sum(gl.reshape(s, [TILE_N, 2, HN]), axis=1), S_MMA)
        if t * TILE_N + TILE_N - 1 <= context:  # every key precedes the first query: one compare per key, not per score
            growth = gl.where(usable[:, None], gl.fma(s, col_scale[None, :], -m_i[None, :]), float("-inf"))
        else:
            growth = gl.where(pos[:, None] <= q_pos[None, :], gl.fma(s, col_scale[None, :], -m_i[None, :]),
                              float("-inf"))  # scaled s - base
        p = gl.exp2(growth)
        # warp w holds keys 16 w + r and 16 w + 8 + r (r = lane // 4) of the tile and columns
        # 8 j + 2 (lane % 4) + {0, 1}: its largest growth from registers alone, then the warp's vote
        own = gl.reshape(growth, [WARPS, 2, 8, HN // 8, 4, 2])
        own = gl.permute(gl.max(gl.max(gl.max(own, axis=5), axis=3), axis=1), [1, 2, 0])  # [r, lane % 4, warp]
        votes_smem.store(warp_votes(gl.reshape(own, [32, WARPS]), RESCALE_SLACK))
        p_smem.store(p.to(gl.float16))
        fence_async_shared()
        gl.thread_barrier()  # every warp's P^T rows and vote
        if any_warp_voted(votes_smem):  # the same decision in every warp
            visible = pos[:, None] <= q_pos[None, :]
            m_new = gl.maximum(m_i, gl.max(gl.where(visible, s * col_scale[None, :], float("-inf")), axis=0))
            alpha = gl.exp2(m_i - m_new)
            alpha_o = gl.convert_layout(alpha, gl.SliceLayout(0, O_MMA))
            o_even = o_even * alpha_o[None, :]
            o_odd = o_odd * alpha_o[None, :]
            l_i = l_i * gl.convert_layout(alpha, gl.SliceLayout(0, gl.SliceLayout(1, l_i.type.layout)))[None, None, :]
            m_i = m_new
            p = gl.exp2(gl.where(visible, gl.fma(s, col_scale[None, :], -m_i[None, :]), float("-inf")))
            p_smem.store(p.to(gl.float16))
            fence_async_shared()
            gl.thread_barrier()
        l_i = l_i + gl.sum(gl.reshape(p, [WARPS, 2, TILE_N // WARPS // 2, HN]), axis=1)
        for c in gl.static_range(TILE_N // CHUNK):
            v_even, v_odd = fp8_pairs_to_fp16(raw)
            o_even = warpgroup_mma(v_even, p_smem.slice(c * CHUNK, CHUNK, dim=0), o_even, is_async=True)
            o_odd = warpgroup_mma(v_odd, p_smem.slice(c * CHUNK, CHUNK, dim=0), o_odd, is_async=True)
            if c + 1 < TILE_N // CHUNK:  # the next chunk's V is read while this one's products run
                raw = v_slot.slice((c + 1) * CHUNK, CHUNK, dim=0).permute([1, 0]).load(V_OP)
            o_even, o_odd = warpgroup_mma_wait(num_outstanding=0, deps=(o_even, o_odd))
    async_copy.wait_group(0)

    l_sum = gl.convert_layout(gl.sum(gl.sum(l_i, axis=1), axis=0), COLS)
    v_scale = load_scale(v_scale_ptr, v_scale_value, V_SCALE_TENSOR)
    # O^T's halves as rows of packed queries: fp32 partial rows stored straight from their registers
    if SPLIT:
        has_keys = _store_interleaved_rows(o_even, o_odd, l_sum, v_scale, part_ptr + part_cols * D, col_ok)
        lse = gl.where(has_keys, m_i + gl.log2(gl.where(has_keys, l_sum, 1.0)), float("-inf"))
        gl.store(lse_ptr + part_cols, lse, mask=col_ok)
    else:  # 16-bit rows through the layout change: 16-byte stores (pairs would be 4-byte ones and take 13
        # more registers, which costs the one-warpgroup form its third program per SM)
        OUT: gl.constexpr = gl.BlockedLayout([1, 8], [32 * 8 // D, D // 8], [WARPS, 1], [1, 0])
        o, _ = interleaved_rows(o_even, o_odd, l_sum, v_scale, OUT)
        offs_o = gl.arange(0, HN, layout=gl.SliceLayout(1, OUT))
        o_ok = (offs_o < HN // GROUP * GROUP) & (offs_o // GROUP < q_len)
        offs_d = gl.arange(0, D, layout=gl.SliceLayout(0, OUT))
        rows = (q_first + offs_o // GROUP).to(gl.int64) * stride_o_tok + \
            (kv_head * GROUP + offs_o % GROUP) * stride_o_head
        gl.store(out_ptr + rows[:, None] + offs_d[None, :], o.to(out_ptr.dtype.element_ty), mask=o_ok[:, None])


@gluon.jit
def _store_interleaved_rows(o_even, o_odd, l_sum, v_scale, col_ptrs, col_ok):
    """gluon_common.scaled_halves' values stored straight from O^T's wgmma registers, without
    interleaved_rows' layout change through shared memory: head dimensions 2i and 2i + 1 of column
    c (one register of each half) go to col_ptrs[c] + 2i and + 2i + 1, one 8-byte (fp32) or 4-byte
    store per pair, so a warp's store covers 16 consecutive dimensions of each of 4 columns (whole
    32-byte sectors).
    col_ptrs: a pointer per column (the row it is written to, head dimension 0; its element type is
    the stored one); columns whose col_ok is false are not written. Returns which columns saw keys."""
    o, has_keys = scaled_halves(o_even, o_odd, l_sum, v_scale)
    PAIRS: gl.constexpr = o.type.layout
    COLUMNS: gl.constexpr = gl.SliceLayout(0, gl.SliceLayout(2, PAIRS))
    dims = gl.arange(0, o_even.shape[0], layout=gl.SliceLayout(1, gl.SliceLayout(2, PAIRS)))
    pair = gl.arange(0, 2, layout=gl.SliceLayout(0, gl.SliceLayout(1, PAIRS)))
    ptrs = gl.convert_layout(col_ptrs, COLUMNS)[None, :, None] + (2 * dims)[:, None, None] + pair[None, None, :]
    gl.store(ptrs, o.to(col_ptrs.dtype.element_ty), mask=gl.convert_layout(col_ok, COLUMNS)[None, :, None])
    return has_keys


def launch_unified_keys_rows(q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, block_table, *, max_seqlen_q: int,
                             softmax_scale: float, k_scale=None, v_scale=None, profile: LaunchProfile) -> None:
    """Launch with the given profile (its packed rows, stages and splits); decides nothing. Each
    sequence gets cdiv(max_seqlen_q, block_m // group) query blocks. k_scale and v_scale (float or
    device tensor) are the FP8 pages' dequantisation scales."""
    num_tokens, num_q_heads, head = q.shape
    num_blocks, page, num_kv_heads, _ = k_cache.shape
    splits = profile.num_splits
    if num_tokens == 0:
        return
    q_blocks = profile.query_blocks(num_q_heads // num_kv_heads, max_seqlen_q)
    part, lse = split_workspace(splits, num_tokens, num_q_heads, head, out)
    k_scale_t, k_scale_v, k_is_t = scale_args(k_scale)
    v_scale_t, v_scale_v, v_is_t = scale_args(v_scale)
    unified_keys_rows_kernel[(seq_lens.shape[0] * q_blocks, num_kv_heads, splits)](
        q, k_cache, v_cache, out, part, lse, cu_seqlens_q, seq_lens, block_table,
        num_tokens, num_blocks, block_table.shape[1], splits,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), out.stride(0), out.stride(1),
        block_table.stride(0), k_scale_t, v_scale_t, softmax_scale, k_scale_v, v_scale_v, q_blocks,
        NUM_Q_HEADS=num_q_heads, GROUP=num_q_heads // num_kv_heads, HN=profile.block_m, D=head, PAGE=page,
        TILE_N=profile.tile_n, STAGES=profile.num_stages, SPLIT=splits > 1,
        SAME_STRIDES=k_cache.stride() == v_cache.stride(), K_SCALE_TENSOR=k_is_t, V_SCALE_TENSOR=v_is_t,
        MULTI_BLOCK=q_blocks > 1, num_warps=profile.num_warps,
        maxnreg=keys_rows_register_cap(profile, head, DeviceInfo.current(q.device.index)),
    )
    if splits > 1:
        launch_merge(part, lse, out)
