"""Sparse paged GQA attention on mma.sync in Gluon: two warps, one shared-memory exchange per tile.

The same call as ops/sparse.py (its token pre-pass resolves every selection to a physical token id
or -1 first), for the shapes where the Triton kernel spends its time in barriers: with BLOCK_M = 16
rows Triton spreads a program's two warps over the keys of a tile, so the tile's row maximum, its
row sum and P's change of layout are each a cross-warp exchange, 9 barriers per tile in the sm90
build (perf-notes v11). Here each warp computes the scores of its half of the tile's keys, P with
the exponent base it already holds (kept lazily, as in ops/common.py), and its vote: whether any of
its scores exceeds that base by more than RESCALE_SLACK (log2 units; each thread takes the largest
amount over its own registers, then one `vote.sync` over the warp, `gluon_common.warp_votes`,
where a maximum over the lanes took five shuffles, perf-notes v26); P and both votes go to shared
memory together and one barrier later both warps read the full P and take the same decision. Only
when a vote is set (the first tile, and rarely after) do the warps exchange their row maxima (a
second barrier), move the base, rescale O and l and rewrite P (a third).
Row sums stay element-wise in each warp's registers until the end. K/V tiles come through a ring of
cp.async copies (token ids read a step ahead into registers, without bounds at one split: the
pre-pass pads each row with -1 as far as the ring reads ahead, `token_row_width`; each copied row's
address is one wide
multiply-add of a 32-bit id and stride onto a per-thread column pointer computed before the loop,
`_wide_product`; with dense pages a token id times the slot stride is the row's offset); beside
each slot, an fp32 ring holds each key's additive mask (0, or -inf for an unusable key), so a score
is scaled and masked in one multiply-add. Each warp then multiplies P by its half of V's columns, so
O is split along the head dimension. (The sm90 build has one more barrier per tile, which Triton's
barrier analysis inserts between the copies issued into the ring and the reads of the ring, since
it cannot tell the ring's slots apart; a probe without it measured the same times, perf-notes v12
item 9.)
FP8 pages (e4m3) are copied as they are and converted in registers, no shared-memory round trip:
a ring slot is read as int16 pairs of values (head dimensions 2c and 2c + 1), loaded straight into
the matrix unit's operand layouts (K's pairs lie along the reduced head dimension, V's along the
output columns). A register of two V pairs becomes two fp16 registers, one of the even and one of
the odd dimensions (`gluon_common.fp8_pairs_to_fp16`: a byte permute and two paired conversions),
so O_even = P . v_even and O_odd = P . v_odd, stored to the even and odd columns. K needs no permute:
the reduced dimension may be taken in any order that q's is, so a register of two K pairs converts
as it lies into two fp16 registers (`_fp8_quads_to_fp16`: dimensions 4j, 4j + 1 and 4j + 2, 4j + 3)
and q is loaded in that order (`_q_operand`): S = q_first . k_first + q_second . k_second, two
accumulation chains, each half as long (perf-notes v25 item 1: 13 % fewer loop instructions with
the copies' addressing). As in ops/unified.py q is multiplied by the softmax scale in fp32 before its
fp16 cast (here loaded once per program straight into the operand layout), k_scale scales the
scores and v_scale the output.

Grid: (rows, KV heads, splits); splits > 1 write fp32 partials and their log2-sum-exp for
ops/common.py's merge, as ops/sparse.py does. Runs on sm90 only and never under the Triton
interpreter (Gluon kernels do not interpret): the profile layer routes here only calls whose group
fits the 16-row block (`select.exchange_problem`); the CPU suite builds it offline, the GPU suite
checks its results.

Launch parameters and the shape property each is tied to (from `pagedattn.profiles`):
  BLOCK_M = 16  one mma.sync row block: GROUP <= 16 query heads of one KV head (padding masked).
  num_warps = 2 the two warps that split each tile's keys (scores) and the head dimension (O).
  TILE_N        selected tokens per tile, a multiple of 16 (each warp's half is whole 8-key
                column blocks of the matrix unit). 32 keeps the registers at ~255 (16-bit pages) or
                ~225 (FP8) with Q held in registers; 16 halves the ring.
  num_stages    depth of the K/V ring (>= 2; 2 already keeps one tile's copies in flight while
                the other is computed). Shared memory = 2 x stages x TILE_N x head x (bytes per
                K/V value) + TILE_N x 16 x 2 (P) + 128 (maxima) + 256 (votes) + stages x TILE_N x
                4 (masks), + 16 x head x 2 (Q) for 16-bit pages. With num_splits = 1 the token
                buffer's rows are padded by stages x TILE_N ids (`token_row_width`).
  num_splits    as in ops/sparse.py: rows x KV heads programs must fill the SMs.
"""

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy, mma_v2

from ..profiles.types import EXCHANGE_BLOCK_M, EXCHANGE_WARPS, LaunchProfile
from .common import LOG2E, RESCALE_SLACK, launch_merge
from .gluon_common import any_warp_voted, fp8_pairs_to_fp16, load_scale, warp_votes
from .sparse import prepare_sparse_call

BLOCK_M = gl.constexpr(EXCHANGE_BLOCK_M)
WARPS = gl.constexpr(EXCHANGE_WARPS)


@gluon.jit
def _fp8_quads_to_fp16(pairs):
    """K's conversion, without `gluon_common.fp8_pairs_to_fp16`'s byte permute: each 32-bit register
    of `pairs` (K's operand layout) holds pairs c and c + 1 (c even) along the reduced head dimension,
    that is head dimensions 2c to 2c + 3; the first result takes pair c's two values (dimensions 2c
    and 2c + 1) into its elements c and c + 1, the second pair c + 1's (2c + 2 and 2c + 3). So
    element c of the first holds dimension 4 (c // 2) + c % 2 and of the second that plus 2: a fixed
    order of the reduced dimension, which `_q_operand` gives q."""
    return gl.inline_asm_elementwise(
        """{
        .reg .b16 low, high;
        mov.b32 {low, high}, $2;
        cvt.rn.f16x2.e4m3x2 $0, low;
        cvt.rn.f16x2.e4m3x2 $1, high;
        }""",
        "=r,=r,r", [pairs], dtype=(gl.float16, gl.float16), is_pure=True, pack=2)


@gluon.jit
def _q_operand(q_ptr, row, kv_head, stride_q_row, stride_q_head, softmax_scale, first,
               GROUP: gl.constexpr, COLS: gl.constexpr, A_OP: gl.constexpr):
    """Head dimensions first + 4 (c // 2) + c % 2 for c < COLS (`_fp8_quads_to_fp16`'s order; first
    0 or 2) of the row's GROUP query heads, times the softmax scale in fp32, as an fp16 A operand
    (straight from global memory, once per program)."""
    offs_m = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, A_OP))
    c = gl.arange(0, COLS, layout=gl.SliceLayout(0, A_OP))
    cols = first + 4 * (c // 2) + c % 2
    q = gl.load(q_ptr + row * stride_q_row + (kv_head * GROUP + offs_m)[:, None] * stride_q_head + cols[None, :],
                mask=(offs_m < GROUP)[:, None], other=0.0)
    return (q.to(gl.float32) * softmax_scale).to(gl.float16)


@gluon.jit
def _store_columns(o, cols, scale, row, part_rows, row_ok, out_ptr, part_ptr, stride_o_row, stride_o_head, head,
                   D: gl.constexpr, SPLIT: gl.constexpr):
    """The rows' normalised output at head dimensions `cols`: fp32 partials or the output dtype."""
    o = o * scale[:, None]
    if SPLIT:
        gl.store(part_ptr + (part_rows * D)[:, None] + cols[None, :], o, mask=row_ok[:, None])
    else:
        gl.store(out_ptr + row * stride_o_row + (head * stride_o_head)[:, None] + cols[None, :],
                 o.to(out_ptr.dtype.element_ty), mask=row_ok[:, None])


@gluon.jit
def _token_ids(tokens_row, lo, hi, t, TILE_N: gl.constexpr, COPY: gl.constexpr, PADDED: gl.constexpr):
    """Token ids of tile t of the slot range [lo, hi) (-1 past hi), one per copied row. PADDED (one
    split: the range is the row's used slots): the pre-pass wrote -1 past them as far as the loop
    reads ahead (`token_row_width`), so the load needs no bounds."""
    j = lo + t * TILE_N + gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY))
    if PADDED:
        return gl.load(tokens_row + j)
    return gl.load(tokens_row + j, mask=j < hi, other=-1)


@gluon.jit
def _wide_product(x, stride):
    """x times stride, both taken as unsigned 32-bit, as unsigned 64-bit products: the copies' row
    offsets, declared multiples of 16 (the profile layer runs the sparse Gluon kernels only on caches
    whose strides are, `select.shape_problem`). One mul.wide.u32 each, which ptxas folds with the row's
    base pointer into one wide multiply-add; the same product of two widened values compiles to a
    64 x 64-bit multiply and a separate add inside the loop, the stride's widening being hoisted out
    of it (perf-notes v25 item 1)."""
    product = gl.inline_asm_elementwise("mul.wide.u32 $0, $1, $2;", "=l,r,r", [x.to(gl.uint32), stride.to(gl.uint32)],
                                        dtype=gl.uint64, is_pure=True, pack=1)
    return gl.multiple_of(product, 16)


@gluon.jit
def _issue_tile(k_cols, v_cols, k_ring, v_ring, bias_ring, token, t, stride_k_block, stride_k_slot, stride_v_block,
                stride_v_slot, PAGE: gl.constexpr, STAGES: gl.constexpr, DENSE_PAGES: gl.constexpr):
    """cp.async of tile t's K and V rows (`k_cols`, `v_cols`: the program's KV head's pointers to a
    row's columns, in the copy layout) into ring slot t % STAGES (unusable ids zero-filled, never
    read), and each key's additive score mask (0, or -inf for an unusable key) into the same slot of
    an fp32 ring for the softmax. Token ids are >= 0 once masked (`masked`), so the offsets are unsigned
    32 x 32 -> 64-bit products (the strides taken as 32-bit: a page stride of 2^32 elements or more,
    a page of 8 GB at 16 bits, would wrap); with dense pages (page stride = PAGE x slot stride, both
    caches) a token id times the slot stride is its row (perf-notes v13)."""
    usable = token >= 0
    masked = gl.where(usable, token, 0)
    if DENSE_PAGES:
        k_rows = _wide_product(masked, stride_k_slot)
        v_rows = _wide_product(masked, stride_v_slot)
    else:
        phys = masked // PAGE
        slot = masked % PAGE
        k_rows = _wide_product(phys, stride_k_block) + _wide_product(slot, stride_k_slot)
        v_rows = _wide_product(phys, stride_v_block) + _wide_product(slot, stride_v_slot)
    async_copy.async_copy_global_to_shared(k_ring.index(t % STAGES), k_cols[None, :] + k_rows[:, None],
                                           mask=usable[:, None])
    async_copy.async_copy_global_to_shared(v_ring.index(t % STAGES), v_cols[None, :] + v_rows[:, None],
                                           mask=usable[:, None])
    async_copy.commit_group()
    bias_ring.index(t % STAGES).store(gl.where(usable, 0.0, float("-inf")))


@gluon.jit
def _start_ring(tokens_ptr, row, stride_tokens, k_ptr, v_ptr, kv_head, stride_k_head, stride_v_head, k_ring, v_ring,
                bias_ring, lo, hi, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, D: gl.constexpr,
                PAGE: gl.constexpr, STAGES: gl.constexpr, TILE_N: gl.constexpr, DENSE_PAGES: gl.constexpr,
                COPY: gl.constexpr, PADDED: gl.constexpr):
    """The ring's prologue, shared by the sparse Gluon kernels: copies of the first STAGES - 1 tiles
    of the slot range [lo, hi) into the ring. Returns the row's token ids, the program's K and V
    pointers to a row's columns (its KV head; computed once, outside the loop) and the next tile's
    token ids, read a step ahead."""
    tokens_row = tokens_ptr + row * stride_tokens
    cols = gl.arange(0, D, layout=gl.SliceLayout(0, COPY))
    k_cols = k_ptr + kv_head * stride_k_head + cols
    v_cols = v_ptr + kv_head * stride_v_head + cols
    for ahead in gl.static_range(STAGES - 1):
        _issue_tile(k_cols, v_cols, k_ring, v_ring, bias_ring,
                    _token_ids(tokens_row, lo, hi, ahead, TILE_N, COPY, PADDED), ahead, stride_k_block, stride_k_slot,
                    stride_v_block, stride_v_slot, PAGE, STAGES, DENSE_PAGES)
    return tokens_row, k_cols, v_cols, _token_ids(tokens_row, lo, hi, STAGES - 1, TILE_N, COPY, PADDED)


@gluon.jit(do_not_specialize=["num_rows"])
def sparse_exchange_kernel(
    q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr, tokens_ptr, counts_ptr, k_scale_ptr, v_scale_ptr,
    k_scale_value, v_scale_value, softmax_scale, num_rows, topk, stride_tokens, num_splits,
    stride_q_row, stride_q_head, stride_k_block, stride_k_slot, stride_k_head,
    stride_v_block, stride_v_slot, stride_v_head, stride_o_row, stride_o_head,
    NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, D: gl.constexpr, PAGE: gl.constexpr,
    TILE_N: gl.constexpr, STAGES: gl.constexpr, SPLIT: gl.constexpr, HAS_COUNTS: gl.constexpr,
    KV_FP8: gl.constexpr, K_SCALE_TENSOR: gl.constexpr, V_SCALE_TENSOR: gl.constexpr, DENSE_PAGES: gl.constexpr,
):
    row = gl.program_id(0).to(gl.int64)
    kv_head = gl.program_id(1)
    split = gl.program_id(2)
    DTYPE: gl.constexpr = q_ptr.dtype.element_ty
    KV_DTYPE: gl.constexpr = k_ptr.dtype.element_ty
    MMA_DTYPE: gl.constexpr = gl.float16 if KV_FP8 else DTYPE
    COPY_VEC: gl.constexpr = 128 // KV_DTYPE.primitive_bitwidth  # values per 16-byte copy
    LANES_D: gl.constexpr = min(8, D // COPY_VEC)
    COPY: gl.constexpr = gl.BlockedLayout([1, COPY_VEC], [32 // LANES_D, LANES_D], [WARPS, 1], [1, 0])
    S_MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[1, WARPS], instr_shape=[16, 8])
    A_OP: gl.constexpr = gl.DotOperandLayout(0, S_MMA, k_width=2)
    B_OP: gl.constexpr = gl.DotOperandLayout(1, S_MMA, k_width=2)
    ROWS: gl.constexpr = gl.SliceLayout(1, S_MMA)
    # a warp's row maxima [16, warp]: the warp's column and the rows as ROWS holds them
    MAXIMA: gl.constexpr = gl.DistributedLinearLayout(
        reg_bases=[[0, 1], [8, 0]], lane_bases=[[0, 0], [0, 0], [1, 0], [2, 0], [4, 0]], warp_bases=[[0, 0]],
        block_bases=[], shape=[16, 2])
    TILE_SMEM: gl.constexpr = gl.SwizzledSharedLayout(8, 1, 8, order=[1, 0])  # 16-bit tiles: 16-byte units
    RING_SMEM: gl.constexpr = gl.SwizzledSharedLayout(COPY_VEC, 1, 8, order=[1, 0])  # a copy's 16 bytes stay whole
    FLAT: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0])
    FLAT_1D: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[0])
    # P's rows are TILE_N x 2 bytes: rows sharing a 128-byte line get different 16-byte units
    P_SMEM: gl.constexpr = gl.SwizzledSharedLayout(8, max(1, 64 // TILE_N), min(8, TILE_N // 8), order=[1, 0])

    used = topk
    if HAS_COUNTS:  # stop after the row's valid slots instead of scanning its padding
        used = gl.maximum(gl.minimum(gl.load(counts_ptr + row), topk), 0)
    per_split = gl.cdiv(gl.cdiv(used, num_splits), TILE_N) * TILE_N
    lo = split * per_split
    hi = gl.minimum(lo + per_split, used)
    offs_m = gl.arange(0, BLOCK_M, layout=ROWS)
    head = kv_head * GROUP + offs_m
    row_ok = offs_m < GROUP
    part_rows = (split * num_rows + row) * NUM_Q_HEADS + head
    if SPLIT:
        if lo >= hi:
            gl.store(lse_ptr + part_rows, gl.full([BLOCK_M], float("-inf"), gl.float32, ROWS), mask=row_ok)
            return

    scale_log2 = LOG2E * load_scale(k_scale_ptr, k_scale_value, K_SCALE_TENSOR)
    k_ring = gl.allocate_shared_memory(KV_DTYPE, [STAGES, TILE_N, D], RING_SMEM)
    v_ring = gl.allocate_shared_memory(KV_DTYPE, [STAGES, TILE_N, D], RING_SMEM)
    if KV_FP8:  # the softmax scale goes into q in fp32 before the fp16 cast; q in K's two orders of the head dims
        q_first = _q_operand(q_ptr, row, kv_head, stride_q_row, stride_q_head, softmax_scale, 0, GROUP, D // 2, A_OP)
        q_second = _q_operand(q_ptr, row, kv_head, stride_q_row, stride_q_head, softmax_scale, 2, GROUP, D // 2, A_OP)
        k_pairs = k_ring._reinterpret(gl.int16, [STAGES, TILE_N, D // 2], TILE_SMEM)  # the same bytes
        v_pairs = v_ring._reinterpret(gl.int16, [STAGES, TILE_N, D // 2], TILE_SMEM)
    else:
        offs_q = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, COPY))
        q = gl.load(q_ptr + row * stride_q_row + (kv_head * GROUP + offs_q)[:, None] * stride_q_head
                    + gl.arange(0, D, layout=gl.SliceLayout(0, COPY))[None, :], mask=(offs_q < GROUP)[:, None],
                    other=0.0)
        scale_log2 = scale_log2 * softmax_scale
        q_smem = gl.allocate_shared_memory(DTYPE, [BLOCK_M, D], TILE_SMEM, q)
    bias_ring = gl.allocate_shared_memory(gl.float32, [STAGES, TILE_N], FLAT_1D)
    p_smem = gl.allocate_shared_memory(MMA_DTYPE, [BLOCK_M, TILE_N], P_SMEM)
    maxima_smem = gl.allocate_shared_memory(gl.float32, [BLOCK_M, WARPS], FLAT)
    votes_smem = gl.allocate_shared_memory(gl.float32, [32, WARPS], FLAT)  # each thread's copy of its warp's vote

    tokens_row, k_cols, v_cols, token_next = _start_ring(
        tokens_ptr, row, stride_tokens, k_ptr, v_ptr, kv_head, stride_k_head, stride_v_head, k_ring, v_ring, bias_ring,
        lo, hi, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, D, PAGE, STAGES, TILE_N, DENSE_PAGES,
        COPY, not SPLIT)
    if KV_FP8:  # O in two halves: the even and the odd head dimensions
        o_even = gl.zeros([BLOCK_M, D // 2], gl.float32, S_MMA)
        o_odd = gl.zeros([BLOCK_M, D // 2], gl.float32, S_MMA)
    else:
        gl.thread_barrier()
        q_op = q_smem.load(A_OP)
        o = gl.zeros([BLOCK_M, D], gl.float32, S_MMA)
    m_i = gl.full([BLOCK_M], -1.0e30, gl.float32, ROWS)
    l_i = gl.zeros([BLOCK_M, TILE_N], gl.float32, S_MMA)  # element-wise; summed over keys after the loop
    for t in range(0, gl.cdiv(hi - lo, TILE_N)):
        async_copy.wait_group(STAGES - 2)
        gl.thread_barrier()  # tile t landed for both warps; both are done with tile t - 1's slot
        _issue_tile(k_cols, v_cols, k_ring, v_ring, bias_ring, token_next, t + STAGES - 1, stride_k_block,
                    stride_k_slot, stride_v_block, stride_v_slot, PAGE, STAGES, DENSE_PAGES)
        token_next = _token_ids(tokens_row, lo, hi, t + STAGES, TILE_N, COPY, not SPLIT)
        if KV_FP8:
            k_first, k_second = _fp8_quads_to_fp16(k_pairs.index(t % STAGES).permute([1, 0]).load(B_OP))
            zeros = gl.zeros([BLOCK_M, TILE_N], gl.float32, S_MMA)  # two accumulation chains, each half as long
            s = mma_v2(q_first, k_first, zeros) + mma_v2(q_second, k_second, zeros)
        else:
            s = mma_v2(q_op, k_ring.index(t % STAGES).permute([1, 0]).load(B_OP),
                       gl.zeros([BLOCK_M, TILE_N], gl.float32, S_MMA))
        s = s * scale_log2 + bias_ring.index(t % STAGES).load(gl.SliceLayout(0, S_MMA))[None, :]
        growth = s - m_i[:, None]
        p = gl.exp2(growth)
        # a thread holds rows r and r + 8 (r = lane // 4) and columns 16 i + 8 w + 2 (lane % 4) + {0, 1} of
        # its warp w: its largest growth from registers alone, then the warp's vote
        own = gl.reshape(growth, [2, 8, TILE_N // 16, WARPS, 4, 2])
        own = gl.permute(gl.max(gl.max(gl.max(own, axis=5), axis=2), axis=0), [0, 2, 1])  # [r, lane % 4, warp]
        votes_smem.store(gl.reshape(warp_votes(own, RESCALE_SLACK), [32, WARPS]))
        p_smem.store(p.to(MMA_DTYPE))
        gl.thread_barrier()  # the exchange: both warps' P and votes
        # the same decision in both warps: either warp's vote (lane 0's copies)
        if any_warp_voted(votes_smem):
            # rare: both warps' row maxima, then a new base
            maxima_smem.store(gl.max(gl.max(gl.reshape(s, [BLOCK_M, TILE_N // 16, WARPS, 8]), axis=3), axis=1))
            gl.thread_barrier()
            m_tile = gl.convert_layout(gl.max(maxima_smem.load(MAXIMA), axis=1), ROWS, assert_trivial=True)
            m_new = gl.maximum(m_i, m_tile)
            alpha = gl.exp2(m_i - m_new)
            if KV_FP8:
                o_even = o_even * alpha[:, None]
                o_odd = o_odd * alpha[:, None]
            else:
                o = o * alpha[:, None]
            l_i = l_i * alpha[:, None]
            m_i = m_new
            p = gl.exp2(s - m_i[:, None])
            p_smem.store(p.to(MMA_DTYPE))
            gl.thread_barrier()
        l_i = l_i + p
        if KV_FP8:
            p_op = p_smem.load(A_OP)
            v_even, v_odd = fp8_pairs_to_fp16(v_pairs.index(t % STAGES).load(B_OP))
            o_even = mma_v2(p_op, v_even, o_even)
            o_odd = mma_v2(p_op, v_odd, o_odd)
        else:
            o = mma_v2(p_smem.load(A_OP), v_ring.index(t % STAGES).load(B_OP), o)
    async_copy.wait_group(0)

    l_sum = gl.sum(l_i, axis=1)
    has_keys = l_sum > 0.0
    o_scale = gl.where(has_keys, load_scale(v_scale_ptr, v_scale_value, V_SCALE_TENSOR) / gl.where(has_keys, l_sum, 1.0),
                       0.0)
    if KV_FP8:
        pair = gl.arange(0, D // 2, layout=gl.SliceLayout(0, S_MMA))
        _store_columns(o_even, 2 * pair, o_scale, row, part_rows, row_ok, out_ptr, part_ptr, stride_o_row,
                       stride_o_head, head, D, SPLIT)
        _store_columns(o_odd, 2 * pair + 1, o_scale, row, part_rows, row_ok, out_ptr, part_ptr, stride_o_row,
                       stride_o_head, head, D, SPLIT)
    else:
        _store_columns(o, gl.arange(0, D, layout=gl.SliceLayout(0, S_MMA)), o_scale, row, part_rows, row_ok, out_ptr,
                       part_ptr, stride_o_row, stride_o_head, head, D, SPLIT)
    if SPLIT:
        lse = gl.where(has_keys, m_i + gl.log2(gl.where(has_keys, l_sum, 1.0)), float("-inf"))
        gl.store(lse_ptr + part_rows, lse, mask=row_ok)


def launch_sparse_exchange(
    q, k_cache, v_cache, out, indices, block_table, token_to_req, counts, *,
    softmax_scale: float, k_scale, v_scale, profile: LaunchProfile,
) -> None:
    """Resolve selections to physical tokens, then launch with the given profile; decides nothing."""
    num_rows, num_q_heads, head = q.shape
    page, num_kv_heads = k_cache.shape[1:3]
    splits = profile.num_splits
    call = prepare_sparse_call(q, k_cache, out, indices, block_table, token_to_req, counts, k_scale, v_scale, splits,
                               head, lambda topk: token_row_width(topk, profile.tile_n, profile.num_stages, splits))
    if call is None:
        return
    k_is_t, v_is_t = call.scales_as_tensors
    sparse_exchange_kernel[(num_rows, num_kv_heads, splits)](
        *call.kernel_args(q, k_cache, v_cache, out, counts, softmax_scale, splits),
        NUM_Q_HEADS=num_q_heads, GROUP=num_q_heads // num_kv_heads, D=head, PAGE=page,
        TILE_N=profile.tile_n, STAGES=profile.num_stages, SPLIT=splits > 1, HAS_COUNTS=counts is not None,
        KV_FP8=k_cache.dtype == torch.float8_e4m3fn, K_SCALE_TENSOR=k_is_t, V_SCALE_TENSOR=v_is_t,
        DENSE_PAGES=dense_pages(k_cache, v_cache), num_warps=EXCHANGE_WARPS,
    )
    if splits > 1:
        launch_merge(call.part, call.lse, out)


def token_row_width(topk: int, tile: int, stages: int, splits: int) -> int:
    """Row length of the token buffer the sparse Gluon kernels read: with one split their ring reads
    token ids unmasked (`_token_ids`) up to `stages` tiles past the row's last tile, so the pre-pass
    pads each row with -1 that far (4.5 % more ids at top-k 2,051, 32-key tiles); with splits the
    reads past a split's range would copy the next split's keys, so they stay masked."""
    if splits > 1:
        return topk
    return triton.cdiv(topk, tile) * tile + stages * tile


def dense_pages(k_cache, v_cache) -> bool:
    """Both caches' page stride is PAGE x slot stride: a token id times the slot stride is its row
    (`_issue_tile`'s DENSE_PAGES)."""
    page = k_cache.shape[1]
    return all(c.stride(0) == page * c.stride(1) for c in (k_cache, v_cache))
