"""Verify and decode attention on Hopper's warpgroup matrix unit (wgmma), written in Gluon.

The unified call for the shapes where the Triton kernel is latency-bound (D=256 verify, 64 packed
rows, 8 warps per SM at 255 registers: perf-notes v5-v8; this kernel is faster there, v9): one
warpgroup per program, Q and a ring of K/V tiles in NVMMA-swizzled shared memory filled by
cp.async, Q.K^T and P.V on wgmma (each K/V tile is read from shared memory once per program, not
once per warp as with mma.sync), and FlashAttention-3's in-warpgroup overlap: tile t + 1's Q.K^T
is issued before tile t's softmax. FP8 pages (e4m3) are copied as they are (half a 16-bit tile's
bytes). Their Q.K^T runs on FP8 wgmma with K as copied: q is held as two e4m3 tiles, hi + lo =
q x 2^k with a power of two per row (`_e4m3_pair`: exact for bf16 q, ~9 significant bits for fp16
q), so two products per tile, and 2^-k, the softmax scale and k_scale scale the scores per row.
V is converted once per tile in shared memory to fp16 for P.V (e4m3 wgmma reads only K-major
operands, and P would lose its small probabilities in e4m3); v_scale scales the output
(perf-notes v10: converting K as well ran at the 16-bit time; v13 item 10: FP8 scores, 12-16 %
less).
The loop does two tiles per step and waits so that no wgmma is in flight across the loop's
back-edge or while O is rescaled; with either, ptxas serializes every wgmma (its C7514/C7515
notes, `scripts/compile_report.py`'s `serial`; tests/test_compile.py keeps the build clean).

Grid: (sequences x query blocks, KV heads, KV segments). A program packs BLOCK_Q = 64 // GROUP query
tokens of one sequence with the GROUP heads of one KV head into BLOCK_M = 64 rows (row r = token
r // GROUP, head r % GROUP, as in ops/unified.py); each sequence gets cdiv(max_seqlen_q, BLOCK_Q)
blocks, those past its queries exit, and every block reads the sequence's keys up to its length
(the causal mask hides the few past the block's last query). With one block per sequence the
launcher sets MULTI_BLOCK False, which builds the code this kernel had before blocks existed
(`_query_block`; offline SASS check, perf-notes v20 item 1). The profile layer routes here head
size 64/128/256, FP8 tiles of at least 2,048 bytes (one 16-byte copy per thread), and no sliding
window, softcap or sinks (`select.shape_problem`); it runs on sm90 only and never under the Triton
interpreter (Gluon kernels do not interpret), so the CPU suite tests its build offline and the GPU
suite its results. KV segments are cut from each sequence's length on the device exactly as in
ops/unified.py; segments past a sequence's keys write lse = -inf and exit. Page ids outside
[0, num_blocks) and entries past the table's width are masked: never copied, never attended.

Launch parameters and the shape property each is tied to (from `pagedattn.profiles`):
  BLOCK_M = 64  one warpgroup's wgmma height; fixed, so GROUP x max_seqlen_q above 64 runs in
                several query blocks per sequence (each reads the sequence's K/V, mostly from L2
                when the blocks of a segment run together).
  TILE_N        keys per tile: the N of Q.K^T and the K of P.V. 16 keeps registers at ~240 (two
                programs per SM); 32 doubles the score registers and the ring's bytes (8-12 %
                slower on the H200). Where it is a multiple of the page size, a tile's page slots
                and table indices are computed without its index (`_tile_pages`, `_issue_tile`;
                shared with ops/unified_keys_rows.py): 3 % fewer loop instructions here, 0.98-0.99x
                the BF16 MTP time on the H200 (perf-notes v37 item 1).
  num_stages    depth of the K/V ring (>= 3: two tiles per loop step are consumed while the next
                copies land). Shared memory = (64 x head x 2: Q, or its two e4m3 tiles) + 2 x
                stages x TILE_N x head x (bytes per K/V value) + one byte per ring key, + 3 x
                TILE_N x head x 2 for FP8 pages' fp16 V tiles; at D=256 and 16 keys, 4 and 5
                stages of 16-bit pages (96 / 112 KB) and 4 to 7 of FP8 pages (88 to 112 KB) still
                fit two programs per SM; on the H200 4 stages measured 20 % faster than 3, 5
                another 0.3-1.3 % (perf-notes v9).
  num_splits    as in ops/unified.py: sequences x KV heads programs must fill the SMs' slots.
  num_warps = 4 one warpgroup.
  addresses_ahead  (PAGES_AHEAD) each loop step reads the page-table entries of the next step's
                two tiles into registers, so the table load is not waited for between a
                softmax and the copies after it; same ring and shared memory. Tied to the page
                dtype on the H200: 1-4 % less time with 16-bit pages, 0-5 % more with FP8 pages,
                whose build gains 4 registers (perf-notes v15 item 1).
"""

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared, warpgroup_mma, warpgroup_mma_init, warpgroup_mma_wait,
)

from ..profiles.types import WGMMA_BLOCK_M, WGMMA_WARPS, LaunchProfile
from .common import LOG2E, launch_merge, scale_args, split_workspace
from .gluon_common import load_scale

BLOCK_M = gl.constexpr(WGMMA_BLOCK_M)
WARPS = gl.constexpr(WGMMA_WARPS)
BATCH_SIZED_ARGS = ["num_tokens", "max_blocks", "stride_table"]


@gluon.jit
def _tile_pages(table_row, t, tile_hi, kv_len, max_blocks, num_blocks, TILE_N: gl.constexpr, PAGE: gl.constexpr,
                COPY: gl.constexpr):
    """(physical page, usable) of tile t's keys. Not usable, and their table entries not read: keys past
    the sequence, the segment or the table's width; not usable: page ids outside [0, num_blocks) (their
    copies are masked, so the page id is not clamped). One compare per key against the least of the
    three bounds (scalars, hoisted out of the loop) and one unsigned compare per page id, instead of
    three compares and two ANDs per key (perf-notes v37 item 4, v38 item 1)."""
    offs = gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY))
    pos = t * TILE_N + offs
    if TILE_N % PAGE == 0:  # t >= 0: the compiler cannot take t out of (t * TILE_N + offs) // PAGE itself
        page = t * (TILE_N // PAGE) + offs // PAGE
    else:
        page = pos // PAGE
    in_range = pos < gl.minimum(gl.minimum(kv_len, tile_hi * TILE_N), max_blocks * PAGE)
    phys = gl.load(table_row + page, mask=in_range, other=-1)
    return phys, in_range & (phys.to(gl.uint32, bitcast=True) < num_blocks.to(gl.uint32, bitcast=True))


@gluon.jit
def _issue_tile(k_ptr, v_ptr, k_smem, v_smem, usable_smem, phys, ok, t, k_head, v_head, stride_k_block, stride_k_slot,
                stride_v_block, stride_v_slot, TILE_N: gl.constexpr, D: gl.constexpr, PAGE: gl.constexpr,
                STAGES: gl.constexpr, SAME_STRIDES: gl.constexpr, COPY: gl.constexpr):
    """cp.async of tile t's K and V rows (pages `phys`, usable `ok`: `_tile_pages`) into ring slot
    t % STAGES, and which of its keys are usable into the same slot of a byte ring (the softmax reads
    it there instead of the page table again); unusable keys are zero-filled without a read."""
    if TILE_N % PAGE == 0:  # tiles start on page boundaries: the slots do not depend on t (perf-notes v37 item 1)
        slot = gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY)) % PAGE
    else:
        slot = (t * TILE_N + gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY))) % PAGE
    phys = phys.to(gl.int64)
    cols = gl.arange(0, D, layout=gl.SliceLayout(0, COPY))
    k_rows = phys * stride_k_block + slot * stride_k_slot + k_head
    if SAME_STRIDES:  # one offset per key for both caches (perf-notes v9 item 4)
        v_rows = k_rows
    else:
        v_rows = phys * stride_v_block + slot * stride_v_slot + v_head
    async_copy.async_copy_global_to_shared(k_smem.index(t % STAGES), k_ptr + k_rows[:, None] + cols[None, :],
                                           mask=ok[:, None])
    async_copy.async_copy_global_to_shared(v_smem.index(t % STAGES), v_ptr + v_rows[:, None] + cols[None, :],
                                           mask=ok[:, None])
    async_copy.commit_group()
    usable_smem.index(t % STAGES).store(ok.to(gl.int8))


@gluon.jit
def _issue_step_tile(k_ptr, v_ptr, k_smem, v_smem, usable_smem, pages, table_row, t, tile_hi, kv_len, max_blocks,
                     num_blocks, k_head, v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot,
                     TILE_N: gl.constexpr, D: gl.constexpr, PAGE: gl.constexpr, STAGES: gl.constexpr,
                     SAME_STRIDES: gl.constexpr, COPY: gl.constexpr, PAGES_AHEAD: gl.constexpr):
    """A loop step's copy of tile t. With PAGES_AHEAD, `pages` are tile t's physical pages, read one
    step before (-1: not usable), and tile t + 2's (the next step's) are read now and returned, so
    the table load's latency is not waited for between a softmax and the next copies; without,
    tile t's pages are read here and `pages` is returned unused."""
    if PAGES_AHEAD:
        _issue_tile(k_ptr, v_ptr, k_smem, v_smem, usable_smem, pages, pages >= 0, t, k_head, v_head, stride_k_block,
                    stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES, SAME_STRIDES, COPY)
        phys, ok = _tile_pages(table_row, t + 2, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        pages = gl.where(ok, phys, -1)
    else:
        phys, ok = _tile_pages(table_row, t, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        _issue_tile(k_ptr, v_ptr, k_smem, v_smem, usable_smem, phys, ok, t, k_head, v_head, stride_k_block,
                    stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES, SAME_STRIDES, COPY)
    return pages


@gluon.jit
def _fill_ring(k_ptr, v_ptr, k_ring, v_ring, usable_smem, phys, ok, table_row, tile_lo, tile_hi, kv_len, max_blocks,
               num_blocks, k_head, v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot,
               TILE_N: gl.constexpr, D: gl.constexpr, PAGE: gl.constexpr, STAGES: gl.constexpr,
               SAME_STRIDES: gl.constexpr, COPY: gl.constexpr):
    """The ring's prologue: the copies of the segment's first STAGES - 1 tiles. The first tile's
    page-table entries (phys, ok: `_tile_pages` of tile_lo) are the caller's, so it chooses where they
    are read: this kernel right before the copies, ops/unified_keys_rows.py before a barrier with q's
    rows (perf-notes v44 item 6; here that measured 0.998-1.015x on BF16 MTP on the H200); each later
    tile reads its own."""
    for ahead in gl.static_range(STAGES - 1):
        if ahead > 0:
            phys, ok = _tile_pages(table_row, tile_lo + ahead, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE,
                                   COPY)
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, phys, ok, tile_lo + ahead, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)


@gluon.jit
def _query_block(cu_q_ptr, seq_lens_ptr, q_blocks, BLOCK_Q: gl.constexpr, MULTI_BLOCK: gl.constexpr):
    """(sequence, first query token, the sequence's queries from it on, sequence length) of this
    program's query block. MULTI_BLOCK: program_id(0) = sequence x q_blocks + block, each block
    BLOCK_Q tokens; else one block per sequence (the same code as before blocks existed). The length
    is read with the query bounds (volatile: kept before the kernel's exit on an empty block, so the
    three reads take one round trip)."""
    if MULTI_BLOCK:
        seq = gl.program_id(0) // q_blocks
        block_first = gl.program_id(0) % q_blocks * BLOCK_Q
    else:
        seq = gl.program_id(0)
        block_first = 0
    q_first = gl.load(cu_q_ptr + seq) + block_first
    q_len = gl.load(cu_q_ptr + seq + 1) - q_first
    kv_len = gl.load(seq_lens_ptr + seq, volatile=True)
    return seq, q_first, q_len, kv_len


@gluon.jit
def _no_queries(q_len, MULTI_BLOCK: gl.constexpr):
    """Whether a query block has nothing to do: past its sequence's queries (several blocks), or an
    empty sequence (one block: `== 0`, whose predication the one-block build keeps)."""
    if MULTI_BLOCK:
        return q_len <= 0
    else:
        return q_len == 0


@gluon.jit
def _segment_tiles(kv_len, split, num_splits, TILE_N: gl.constexpr):
    """(first tile, end tile) of KV segment `split` of a sequence of kv_len keys: its key tiles cut
    into num_splits equal runs on the device, as ops/unified.py cuts them (a segment past the
    sequence's keys has tile_lo >= tile_hi)."""
    num_tiles = gl.cdiv(kv_len, TILE_N)
    per_split = gl.cdiv(num_tiles, num_splits)
    tile_lo = split * per_split
    return tile_lo, gl.minimum(tile_lo + per_split, num_tiles)


@gluon.jit
def _e4m3_pair(q):
    """Rows of fp32 q as hi + lo, two e4m3 tensors, times 2^k per row, where k puts the row's largest
    |q| into [2^7, 2^8) (e4m3 holds up to 448); returns hi, lo and 2^-k per row. hi + lo is q x 2^k
    exactly for bf16 q (8 significant bits: lo holds hi's rounding error) in every element within
    2^10 of the row's largest, and within 2^-17 of the row's largest below that; fp16 q keeps ~9
    significant bits.
    hi is rounded in fp32 (to nearest even, 3 mantissa bits: the e4m3 value for |x| >= 2^-6) and
    lo taken from it, not from hi's e4m3 converted back: with that round trip, one schedule of the
    same PTX (Q's two tiles stored after both were computed) gave wrong scores on the H200 in every
    FP8 GPU test, another right ones (perf-notes v14 item 1)."""
    bits = gl.maximum((gl.max(gl.abs(q), axis=1).to(gl.int32, bitcast=True) >> 23) & 0xFF, 8)  # biased exponent
    scaled = q * ((261 - bits) << 23).to(gl.float32, bitcast=True)[:, None]  # x 2^(134 - exponent)
    as_bits = scaled.to(gl.int32, bitcast=True)
    hi = ((as_bits + 0x7FFFF + ((as_bits >> 20) & 1)) & -0x100000).to(gl.float32, bitcast=True)  # sign, exponent, 3 bits
    return hi.to(gl.float8e4nv), (scaled - hi).to(gl.float8e4nv), ((bits - 7) << 23).to(gl.float32, bitcast=True)


@gluon.jit
def _operands(k_ring, v_ring, v_mma, t, STAGES: gl.constexpr, KV_FP8: gl.constexpr):
    """The K and V operands of tile t's products: its ring slots, except V of FP8 pages, which is
    read from the fp16 tiles it is converted into (three: tile t - 1's P.V may still read its tile
    while t + 1's is converted, and t's is read next)."""
    if KV_FP8:
        v_op = v_mma.index(t % 3)
    else:
        v_op = v_ring.index(t % STAGES)
    return k_ring.index(t % STAGES), v_op


@gluon.jit
def _scores_next(q_smem, q_rest, k_ring, v_ring, v_mma, usable_smem, t, PENDING: gl.constexpr, STAGES: gl.constexpr,
                 TILE_N: gl.constexpr, S_MMA: gl.constexpr, KV_FP8: gl.constexpr, CONVERT: gl.constexpr):
    """Wait for tile t's copies (PENDING later copy groups may stay in flight), convert FP8 pages'
    V to fp16, start tile t's Q.K^T (asynchronous; for FP8 pages two FP8 products, q's e4m3 high
    and rest tiles with K as copied), and read which of its keys are usable, in the scores' layout."""
    async_copy.wait_group(PENDING)
    gl.thread_barrier()
    k_op, v_op = _operands(k_ring, v_ring, v_mma, t, STAGES, KV_FP8)
    if KV_FP8:
        v_op.store(v_ring.index(t % STAGES).load(CONVERT).to(gl.float16))
        fence_async_shared()
        gl.thread_barrier()
    else:
        fence_async_shared()
    s = warpgroup_mma(q_smem, k_op.permute([1, 0]), gl.zeros([BLOCK_M, TILE_N], gl.float32, S_MMA),
                      use_acc=False, is_async=True)
    if KV_FP8:
        s = warpgroup_mma(q_rest, k_op.permute([1, 0]), s, is_async=True)
    return s, usable_smem.index(t % STAGES).load(gl.SliceLayout(0, S_MMA)) != 0


@gluon.jit
def _softmax_pv(s, usable, s_next, o, m_i, l_i, k_ring, v_ring, v_mma, t, tile_hi, q_pos, score_scale,
                TILE_N: gl.constexpr, STAGES: gl.constexpr, KV_FP8: gl.constexpr, S_MMA: gl.constexpr,
                O_MMA: gl.constexpr, P_OP: gl.constexpr):
    """Online softmax of tile t's scores (causal; keys not usable and tiles past the segment
    masked), then start P.V (asynchronous) once s_next's Q.K^T is done."""
    _, v_op = _operands(k_ring, v_ring, v_mma, t, STAGES, KV_FP8)
    pos = t * TILE_N + gl.arange(0, TILE_N, layout=gl.SliceLayout(0, S_MMA))
    visible = (pos[None, :] <= q_pos[:, None]) & usable[None, :] & (t < tile_hi)
    s = gl.where(visible, s * score_scale, float("-inf"))
    m_new = gl.maximum(m_i, gl.max(s, axis=1))
    alpha = gl.exp2(m_i - m_new)
    p = gl.exp2(s - m_new[:, None])
    l_i = l_i * alpha + gl.sum(p, axis=1)
    p_op = gl.convert_layout(p.to(v_op.dtype), P_OP)
    s_next = warpgroup_mma_wait(num_outstanding=0, deps=(s_next,))  # nothing in flight while O is rescaled
    o = o * gl.convert_layout(alpha, gl.SliceLayout(1, O_MMA))[:, None]
    o = warpgroup_mma(p_op, v_op, o, is_async=True)
    return o, m_new, l_i, s_next


@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + ["q_blocks"])
def verify_wgmma_kernel(
    q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr, cu_q_ptr, seq_lens_ptr, table_ptr,
    scale_log2, num_tokens, num_blocks, max_blocks, num_splits,
    stride_q_tok, stride_q_head, stride_k_block, stride_k_slot, stride_k_head,
    stride_v_block, stride_v_slot, stride_v_head, stride_o_tok, stride_o_head, stride_table,
    k_scale_ptr, v_scale_ptr, softmax_scale, k_scale_value, v_scale_value, q_blocks,
    NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, D: gl.constexpr, PAGE: gl.constexpr,
    TILE_N: gl.constexpr, STAGES: gl.constexpr, SPLIT: gl.constexpr, SAME_STRIDES: gl.constexpr,
    KV_FP8: gl.constexpr, K_SCALE_TENSOR: gl.constexpr, V_SCALE_TENSOR: gl.constexpr, PAGES_AHEAD: gl.constexpr,
    MULTI_BLOCK: gl.constexpr,
):
    kv_head = gl.program_id(1)
    split = gl.program_id(2)
    DTYPE: gl.constexpr = q_ptr.dtype.element_ty
    KV_DTYPE: gl.constexpr = k_ptr.dtype.element_ty
    MMA_DTYPE: gl.constexpr = gl.float16 if KV_FP8 else DTYPE  # P.V's operands: FP8 pages' V converted to fp16
    COPY_VEC: gl.constexpr = 128 // KV_DTYPE.primitive_bitwidth  # elements per 16-byte copy
    S_MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[WARPS, 1],
                                                    instr_shape=[16, TILE_N, 32 if KV_FP8 else 16])
    O_MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[WARPS, 1], instr_shape=[16, D, 16])
    P_OP: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=O_MMA, k_width=2)
    COPY: gl.constexpr = gl.BlockedLayout([1, COPY_VEC], [32 * COPY_VEC // D, D // COPY_VEC], [WARPS, 1], [1, 0])
    Q_LOAD: gl.constexpr = gl.BlockedLayout([1, 8], [32 * 8 // D, D // 8], [WARPS, 1], [1, 0])
    Q_SMEM: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_M, D], MMA_DTYPE)
    RING_SMEM: gl.constexpr = gl.NVMMASharedLayout.get_default_for([TILE_N, D], KV_DTYPE)
    MMA_SMEM: gl.constexpr = gl.NVMMASharedLayout.get_default_for([TILE_N, D], MMA_DTYPE)
    ROWS: gl.constexpr = gl.SliceLayout(1, O_MMA)

    # q_first, q_len and context are the query block's: its first token, the queries from it on, its position
    seq, q_first, q_len, kv_len = _query_block(cu_q_ptr, seq_lens_ptr, q_blocks, BLOCK_M // GROUP, MULTI_BLOCK)
    if _no_queries(q_len, MULTI_BLOCK):
        return
    context = kv_len - q_len  # absolute position of the block's first query
    tile_lo, tile_hi = _segment_tiles(kv_len, split, num_splits, TILE_N)

    offs_m = gl.arange(0, BLOCK_M, layout=ROWS)
    tok = q_first + offs_m // GROUP
    head = kv_head * GROUP + offs_m % GROUP
    row_ok = (offs_m < BLOCK_M // GROUP * GROUP) & (offs_m // GROUP < q_len)
    part_rows = (split * num_tokens + tok).to(gl.int64) * NUM_Q_HEADS + head
    if SPLIT:
        if tile_lo >= tile_hi:  # segment starts past this sequence's keys
            gl.store(lse_ptr + part_rows, gl.full([BLOCK_M], float("-inf"), gl.float32, ROWS), mask=row_ok)
            return

    offs_q = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, Q_LOAD))
    q_rows = (q_first + offs_q // GROUP).to(gl.int64) * stride_q_tok + (kv_head * GROUP + offs_q % GROUP) * stride_q_head
    q_ok = (offs_q < BLOCK_M // GROUP * GROUP) & (offs_q // GROUP < q_len)
    q = gl.load(q_ptr + q_rows[:, None] + gl.arange(0, D, layout=gl.SliceLayout(0, Q_LOAD))[None, :],
                mask=q_ok[:, None], other=0.0)
    if KV_FP8:  # Q.K^T on FP8 wgmma: q as two e4m3 tiles (2^k per row, undone with the softmax and k scales)
        q_hi, q_lo, row_down = _e4m3_pair(q.to(gl.float32))
        Q8_SMEM: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_M, D], gl.float8e4nv)
        q_smem = gl.allocate_shared_memory(gl.float8e4nv, [BLOCK_M, D], Q8_SMEM, q_hi)
        q_rest = gl.allocate_shared_memory(gl.float8e4nv, [BLOCK_M, D], Q8_SMEM, q_lo)
        k_scale = load_scale(k_scale_ptr, k_scale_value, K_SCALE_TENSOR)
        score_scale = gl.convert_layout(row_down, gl.SliceLayout(1, S_MMA))[:, None] * (scale_log2 * softmax_scale
                                                                                      * k_scale)
    else:
        q_smem = gl.allocate_shared_memory(MMA_DTYPE, [BLOCK_M, D], Q_SMEM, q)
        q_rest = q_smem
        score_scale = scale_log2
    k_ring = gl.allocate_shared_memory(KV_DTYPE, [STAGES, TILE_N, D], RING_SMEM)
    v_ring = gl.allocate_shared_memory(KV_DTYPE, [STAGES, TILE_N, D], RING_SMEM)
    if KV_FP8:
        v_mma = gl.allocate_shared_memory(MMA_DTYPE, [3, TILE_N, D], MMA_SMEM)
    else:  # the products read the ring itself
        v_mma = v_ring
    usable_smem = gl.allocate_shared_memory(gl.int8, [STAGES, TILE_N], gl.SwizzledSharedLayout(1, 1, 1, order=[0]))
    table_row = table_ptr + seq.to(gl.int64) * stride_table
    k_head = kv_head * stride_k_head
    v_head = kv_head * stride_v_head
    phys, ok = _tile_pages(table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    _fill_ring(k_ptr, v_ptr, k_ring, v_ring, usable_smem, phys, ok, table_row, tile_lo, tile_hi, kv_len, max_blocks,
               num_blocks, k_head, v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D,
               PAGE, STAGES, SAME_STRIDES, COPY)
    # the first loop step's two tiles' pages, used with PAGES_AHEAD (each step then reads the next step's)
    phys, ok = _tile_pages(table_row, tile_lo + STAGES - 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages_a = gl.where(ok, phys, -1)
    phys, ok = _tile_pages(table_row, tile_lo + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages_b = gl.where(ok, phys, -1)

    o = warpgroup_mma_init(gl.zeros([BLOCK_M, D], gl.float32, O_MMA))
    m_i = gl.full([BLOCK_M], -1.0e30, gl.float32, gl.SliceLayout(1, S_MMA))
    l_i = gl.zeros([BLOCK_M], gl.float32, gl.SliceLayout(1, S_MMA))
    q_pos = context + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, S_MMA)) // GROUP
    # the prologue's wait leaves STAGES - 2 groups in flight, as the loop's does
    s_a, ok_a = _scores_next(q_smem, q_rest, k_ring, v_ring, v_mma, usable_smem, tile_lo, STAGES - 2, STAGES,
                             TILE_N, S_MMA, KV_FP8, COPY)
    s_a = warpgroup_mma_wait(num_outstanding=0, deps=(s_a,))
    for t in range(tile_lo, tile_hi, 2):
        # two tiles per step: tile t + 1's Q.K^T runs under tile t's softmax, then t + 2's under
        # t + 1's; nothing is in flight while O is rescaled nor across the back-edge
        s_b, ok_b = _scores_next(q_smem, q_rest, k_ring, v_ring, v_mma, usable_smem, t + 1, STAGES - 3, STAGES,
                                 TILE_N, S_MMA, KV_FP8, COPY)
        s_a, o = warpgroup_mma_wait(num_outstanding=1, deps=(s_a, o))
        o, m_i, l_i, s_b = _softmax_pv(s_a, ok_a, s_b, o, m_i, l_i, k_ring, v_ring, v_mma, t, tile_hi, q_pos,
                                       score_scale, TILE_N, STAGES, KV_FP8, S_MMA, O_MMA, P_OP)
        gl.thread_barrier()
        pages_a = _issue_step_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages_a, table_row, t + STAGES - 1,
                                   tile_hi, kv_len, max_blocks, num_blocks, k_head, v_head, stride_k_block,
                                   stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                                   SAME_STRIDES, COPY, PAGES_AHEAD)
        s_a, ok_a = _scores_next(q_smem, q_rest, k_ring, v_ring, v_mma, usable_smem, t + 2, STAGES - 3, STAGES,
                                 TILE_N, S_MMA, KV_FP8, COPY)
        s_b, o = warpgroup_mma_wait(num_outstanding=1, deps=(s_b, o))
        o, m_i, l_i, s_a = _softmax_pv(s_b, ok_b, s_a, o, m_i, l_i, k_ring, v_ring, v_mma, t + 1, tile_hi,
                                       q_pos, score_scale, TILE_N, STAGES, KV_FP8, S_MMA, O_MMA, P_OP)
        gl.thread_barrier()
        pages_b = _issue_step_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages_b, table_row, t + STAGES, tile_hi,
                                   kv_len, max_blocks, num_blocks, k_head, v_head, stride_k_block, stride_k_slot,
                                   stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES, SAME_STRIDES, COPY,
                                   PAGES_AHEAD)
        o = warpgroup_mma_init(warpgroup_mma_wait(num_outstanding=0, deps=(o,)))
    o = warpgroup_mma_wait(num_outstanding=0, deps=(o,))
    async_copy.wait_group(0)

    # rows that saw no key (a segment wholly after a row's position) write 0 and lse -inf
    l_o = gl.convert_layout(l_i, ROWS)
    has_keys = l_o > 0.0
    inv_l = gl.where(has_keys, 1.0 / gl.where(has_keys, l_o, 1.0), 0.0)
    if KV_FP8:
        inv_l = inv_l * load_scale(v_scale_ptr, v_scale_value, V_SCALE_TENSOR)
    o = o * inv_l[:, None]
    offs_d = gl.arange(0, D, layout=gl.SliceLayout(0, O_MMA))
    if SPLIT:
        gl.store(part_ptr + (part_rows * D)[:, None] + offs_d[None, :], o, mask=row_ok[:, None])
        lse = gl.where(has_keys, gl.convert_layout(m_i, ROWS) + gl.log2(gl.where(has_keys, l_o, 1.0)), float("-inf"))
        gl.store(lse_ptr + part_rows, lse, mask=row_ok)
    else:
        out_rows = tok.to(gl.int64) * stride_o_tok + head * stride_o_head
        gl.store(out_ptr + out_rows[:, None] + offs_d[None, :], o.to(DTYPE), mask=row_ok[:, None])


def launch_verify_wgmma(q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, block_table, *, max_seqlen_q: int,
                        softmax_scale: float, k_scale=None, v_scale=None, profile: LaunchProfile) -> None:
    """Launch with the given profile (its tile, stages and splits); decides nothing. Each sequence
    gets cdiv(max_seqlen_q, 64 // group) query blocks. k_scale and v_scale (float or device tensor)
    apply to FP8 caches."""
    num_tokens, num_q_heads, head = q.shape
    num_blocks, page, num_kv_heads, _ = k_cache.shape
    splits = profile.num_splits
    if num_tokens == 0:
        return
    q_blocks = profile.query_blocks(num_q_heads // num_kv_heads, max_seqlen_q)
    part, lse = split_workspace(splits, num_tokens, num_q_heads, head, out)
    k_scale_t, k_scale_v, k_is_t = scale_args(k_scale)
    v_scale_t, v_scale_v, v_is_t = scale_args(v_scale)
    kv_fp8 = k_cache.dtype == torch.float8_e4m3fn  # the kernel scales FP8 scores by softmax_scale x k_scale per row
    verify_wgmma_kernel[(seq_lens.shape[0] * q_blocks, num_kv_heads, splits)](
        q, k_cache, v_cache, out, part, lse, cu_seqlens_q, seq_lens, block_table,
        (1.0 if kv_fp8 else softmax_scale) * LOG2E, num_tokens, num_blocks, block_table.shape[1], splits,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), out.stride(0), out.stride(1),
        block_table.stride(0), k_scale_t, v_scale_t, softmax_scale, k_scale_v, v_scale_v, q_blocks,
        NUM_Q_HEADS=num_q_heads, GROUP=num_q_heads // num_kv_heads, D=head, PAGE=page,
        TILE_N=profile.tile_n, STAGES=profile.num_stages, SPLIT=splits > 1,
        SAME_STRIDES=k_cache.stride() == v_cache.stride(), KV_FP8=kv_fp8,
        K_SCALE_TENSOR=k_is_t, V_SCALE_TENSOR=v_is_t, PAGES_AHEAD=profile.addresses_ahead, MULTI_BLOCK=q_blocks > 1,
        num_warps=WGMMA_WARPS,
    )
    if splits > 1:
        launch_merge(part, lse, out)
