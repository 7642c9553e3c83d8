"""Sparse paged GQA attention for FP8 pages with the selected keys as the rows of Hopper's wgmma.

The same call as ops/sparse.py (its token pre-pass resolves every selection to a physical token id
or -1 first), for FP8 pages and small groups. With 16 query heads per program the other sparse
kernels run on mma.sync, whose operands on sm90 are 16-bit, so every K and V byte is converted to
fp16 (an e4m3 mma.sync compiles to the same conversions, perf-notes v13 item 6). wgmma takes e4m3
operands but needs 64 rows; here the rows are 64 selected keys and the query heads are its N:

* S^T = K . Q^T on FP8 wgmma, K straight from the cp.async ring (no conversion), Q as the sum of
  two e4m3 tiles (three for fp16 q) times a power of two per head that puts the head's largest
  |q| into [2^7, 2^8) (`_q_terms`: each term rounded in fp32, never read back from e4m3, perf-notes
  v14 item 1); 2^-k, the softmax scale and k_scale scale the scores per head;
* the softmax runs down the keys, with ops/sparse_exchange.py's lazy base: each warp's vote
  (whether any of its scores grew past the running base by more than RESCALE_SLACK, one
  `vote.sync`, `gluon_common.warp_votes`) goes to shared memory with P^T, and only a set vote
  moves the base, rescales O and l and rewrites P (a second barrier);
* O^T = V^T . P^T on fp16 wgmma: V converted in registers (ops/sparse_exchange.py's int16-pair
  conversion) as the A operand, so O^T splits into even and odd head dimensions, and P^T from
  shared memory; P.V runs in two halves of the tile's keys so that only half of V's fp16 fragments
  are live at once.
K/V tiles come through ops/sparse_exchange.py's ring (`_start_ring`, `_issue_tile`), whose token ids
are read without bounds at one split from rows the pre-pass pads with -1 (`token_row_width`).

Grid: (rows, KV heads, splits); splits > 1 write fp32 partials and their log2-sum-exp for
ops/common.py's merge. Runs on sm90 only, never under the interpreter; the profile layer routes
here only what `select.keys_rows_problem` admits (FP8 pages, head size 128 or 256, groups of at
most 16); the CPU suite builds it offline, the GPU suite checks its results.

Launch parameters and the shape property each is tied to (from `pagedattn.profiles`):
  TILE_N = 64   one wgmma's rows: the selected keys of a step.
  N (heads)     the group rounded up to a power of two, at least wgmma's 8 (`block_m` is 16, the
                largest group this kernel takes).
  num_warps = 4 one warpgroup.
  head size     128 or 256: O^T's even and odd halves (D / 2 rows each) are wgmma's M, >= 64.
  num_stages    depth of the K/V ring (>= 2). Shared memory = terms x N x D (q, 2 terms for bf16 q,
                3 for fp16) + 2 x stages x 64 x D (K, V) + stages x 64 x 4 (masks) + 64 x N x 2
                (P^T) + 512 (votes, one per thread): at D=256, 16 heads, 2 stages, ~80 KB.
  num_splits    as in ops/sparse.py: rows x KV heads programs must fill the SMs.
"""

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, warpgroup_mma, warpgroup_mma_wait

from ..profiles.types import KEYS_ROWS_TILE, KEYS_ROWS_WARPS, LaunchProfile
from .common import LOG2E, RESCALE_SLACK, launch_merge
from .sparse import prepare_sparse_call
from .gluon_common import any_warp_voted, fp8_pairs_to_fp16, interleaved_rows, load_scale, warp_votes
from .sparse_exchange import _issue_tile, _start_ring, _token_ids, dense_pages, token_row_width

WARPS = gl.constexpr(KEYS_ROWS_WARPS)
TILE_N = gl.constexpr(KEYS_ROWS_TILE)


@gluon.jit
def _e4m3_round(x):
    """x rounded to nearest even at 3 mantissa bits, in fp32: the e4m3 value of x for 2^-6 <= |x| <=
    448 (below, e4m3's subnormals round it again when it is converted)."""
    bits = x.to(gl.int32, bitcast=True)
    return ((bits + 0x7FFFF + ((bits >> 20) & 1)) & -0x100000).to(gl.float32, bitcast=True)


@gluon.jit
def _q_terms(q_ptr, row, kv_head, stride_q_row, stride_q_head, HN: gl.constexpr, GROUP: gl.constexpr,
             D: gl.constexpr, TERMS: gl.constexpr, Q_LOAD: gl.constexpr, Q_SMEM: gl.constexpr):
    """q of the row's GROUP heads as TERMS e4m3 tiles in shared memory that sum to q x 2^k per head
    (k puts the head's largest |q| into [2^7, 2^8)); each term is the rest of the ones before it,
    rounded in fp32. Exact for bf16 q with two terms (8 significant bits) down to 2^-10 of the
    head's largest; fp16 q takes three. Returns the tiles (the third is the second's when TERMS is
    2) and 2^-k per head."""
    offs_h = gl.arange(0, HN, layout=gl.SliceLayout(1, Q_LOAD))
    q = gl.load(q_ptr + row * stride_q_row + (kv_head * GROUP + offs_h)[:, None] * stride_q_head
                + gl.arange(0, D, layout=gl.SliceLayout(0, Q_LOAD))[None, :], mask=(offs_h < GROUP)[:, None],
                other=0.0).to(gl.float32)
    bits = gl.maximum((gl.max(gl.abs(q), axis=1).to(gl.int32, bitcast=True) >> 23) & 0xFF, 8)  # biased exponent
    rest = q * ((261 - bits) << 23).to(gl.float32, bitcast=True)[:, None]  # x 2^(134 - exponent)
    hi = _e4m3_round(rest)
    rest = rest - hi
    mid = _e4m3_round(rest)
    q_hi = gl.allocate_shared_memory(gl.float8e4nv, [HN, D], Q_SMEM, hi.to(gl.float8e4nv))
    q_mid = gl.allocate_shared_memory(gl.float8e4nv, [HN, D], Q_SMEM, mid.to(gl.float8e4nv))
    q_lo = q_mid
    if TERMS == 3:
        q_lo = gl.allocate_shared_memory(gl.float8e4nv, [HN, D], Q_SMEM, (rest - mid).to(gl.float8e4nv))
    return q_hi, q_mid, q_lo, ((bits - 7) << 23).to(gl.float32, bitcast=True)


@gluon.jit(do_not_specialize=["num_rows"])
def sparse_keys_rows_kernel(
    q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr, tokens_ptr, counts_ptr, k_scale_ptr, v_scale_ptr,
    k_scale_value, v_scale_value, softmax_scale, num_rows, topk, stride_tokens, num_splits,
    stride_q_row, stride_q_head, stride_k_block, stride_k_slot, stride_k_head,
    stride_v_block, stride_v_slot, stride_v_head, stride_o_row, stride_o_head,
    NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, HN: gl.constexpr, D: gl.constexpr, PAGE: gl.constexpr,
    STAGES: gl.constexpr, SPLIT: gl.constexpr, TERMS: gl.constexpr, HAS_COUNTS: gl.constexpr,
    K_SCALE_TENSOR: gl.constexpr, V_SCALE_TENSOR: gl.constexpr, DENSE_PAGES: gl.constexpr,
):
    row = gl.program_id(0).to(gl.int64)
    kv_head = gl.program_id(1)
    split = gl.program_id(2)
    HALF: gl.constexpr = TILE_N // 2
    COPY: gl.constexpr = gl.BlockedLayout([1, 16], [32 // min(8, D // 16), min(8, D // 16)], [WARPS, 1], [1, 0])
    Q_LOAD: gl.constexpr = gl.BlockedLayout([1, 8], [32 * 8 // D, D // 8], [WARPS, 1], [1, 0])
    S_MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[WARPS, 1], instr_shape=[16, HN, 32])
    O_MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[WARPS, 1], instr_shape=[16, HN, 16])
    V_OP: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=O_MMA, k_width=2)
    KEYS: gl.constexpr = gl.SliceLayout(1, S_MMA)
    HEADS: gl.constexpr = gl.SliceLayout(0, S_MMA)
    FLAT: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[0])
    FLAT_2D: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0])

    used = topk
    if HAS_COUNTS:  # stop after the row's valid slots instead of scanning its padding
        used = gl.maximum(gl.minimum(gl.load(counts_ptr + row), topk), 0)
    per_split = gl.cdiv(gl.cdiv(used, num_splits), TILE_N) * TILE_N
    lo = split * per_split
    hi = gl.minimum(lo + per_split, used)
    offs_h = gl.arange(0, HN, layout=HEADS)
    head_ok = offs_h < GROUP
    part_rows = (split * num_rows + row) * NUM_Q_HEADS + kv_head * GROUP + offs_h
    if SPLIT:
        if lo >= hi:
            gl.store(lse_ptr + part_rows, gl.full([HN], float("-inf"), gl.float32, HEADS), mask=head_ok)
            return

    q_hi, q_mid, q_lo, down = _q_terms(q_ptr, row, kv_head, stride_q_row, stride_q_head, HN, GROUP, D, TERMS, Q_LOAD,
                                       gl.NVMMASharedLayout.get_default_for([HN, D], gl.float8e4nv))
    head_scale = gl.convert_layout(down, HEADS) * (softmax_scale * LOG2E
                                                   * load_scale(k_scale_ptr, k_scale_value, K_SCALE_TENSOR))
    k_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D],
                                       gl.NVMMASharedLayout.get_default_for([TILE_N, D], gl.float8e4nv))
    v_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D], gl.SwizzledSharedLayout(16, 1, 8, order=[1, 0]))
    v_pairs = v_ring._reinterpret(gl.int16, [STAGES, TILE_N, D // 2], gl.SwizzledSharedLayout(8, 1, 8, order=[1, 0]))
    bias_ring = gl.allocate_shared_memory(gl.float32, [STAGES, TILE_N], FLAT)
    p_smem = gl.allocate_shared_memory(gl.float16, [TILE_N, HN],
                                       gl.NVMMASharedLayout.get_default_for([TILE_N, HN], gl.float16))
    # each thread's copy of its warp's vote
    votes_smem = gl.allocate_shared_memory(gl.float32, [32, WARPS], FLAT_2D)

    tokens_row, k_cols, v_cols, token_next = _start_ring(
        tokens_ptr, row, stride_tokens, k_ptr, v_ptr, kv_head, stride_k_head, stride_v_head, k_ring, v_ring, bias_ring,
        lo, hi, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, D, PAGE, STAGES, TILE_N, DENSE_PAGES,
        COPY, not SPLIT)
    o_even = gl.zeros([D // 2, HN], gl.float32, O_MMA)
    o_odd = gl.zeros([D // 2, HN], gl.float32, O_MMA)
    m_i = gl.full([HN], -1.0e30, gl.float32, HEADS)
    l_i = gl.zeros([TILE_N, HN], gl.float32, S_MMA)
    for t in range(0, gl.cdiv(hi - lo, TILE_N)):
        async_copy.wait_group(STAGES - 2)
        gl.thread_barrier()  # tile t landed for every warp; all are done with tile t - 1's slot and P
        _issue_tile(k_cols, v_cols, k_ring, v_ring, bias_ring, token_next, t + STAGES - 1, stride_k_block,
                    stride_k_slot, stride_v_block, stride_v_slot, PAGE, STAGES, DENSE_PAGES)
        token_next = _token_ids(tokens_row, lo, hi, t + STAGES, TILE_N, COPY, not SPLIT)
        fence_async_shared()
        k_tile = k_ring.index(t % STAGES)
        s = warpgroup_mma(k_tile, q_hi.permute([1, 0]), gl.zeros([TILE_N, HN], gl.float32, S_MMA), use_acc=False,
                          is_async=True)
        s = warpgroup_mma(k_tile, q_mid.permute([1, 0]), s, is_async=True)
        if TERMS == 3:
            s = warpgroup_mma(k_tile, q_lo.permute([1, 0]), s, is_async=True)
        v_even, v_odd = fp8_pairs_to_fp16(v_pairs.index(t % STAGES).slice(0, HALF, dim=0).permute([1, 0]).load(V_OP))
        bias = bias_ring.index(t % STAGES).load(KEYS)
        s = warpgroup_mma_wait(num_outstanding=0, deps=(s,))
        s = s * head_scale[None, :] + bias[:, None]
        growth = s - m_i[None, :]
        p = gl.exp2(growth)
        # warp w holds keys 16 w + r and 16 w + 8 + r (r = lane // 4) of the tile and heads
        # 8 j + 2 (lane % 4) + {0, 1}: its largest growth from registers alone, then the warp's vote
        own = gl.reshape(growth, [WARPS, 2, 8, HN // 8, 4, 2])
        own = gl.permute(gl.max(gl.max(gl.max(own, axis=5), axis=3), axis=1), [1, 2, 0])  # [r, lane % 4, warp]
        votes_smem.store(warp_votes(gl.reshape(own, [32, WARPS]), RESCALE_SLACK))
        p_smem.store(p.to(gl.float16))
        fence_async_shared()
        gl.thread_barrier()  # every warp's P^T rows and vote
        # the same decision in every warp: any warp's vote (lane 0's copies)
        if any_warp_voted(votes_smem):
            m_new = gl.maximum(m_i, gl.max(s, axis=0))
            alpha = gl.exp2(m_i - m_new)
            alpha_o = gl.convert_layout(alpha, gl.SliceLayout(0, O_MMA))
            o_even = o_even * alpha_o[None, :]
            o_odd = o_odd * alpha_o[None, :]
            l_i = l_i * alpha[None, :]
            m_i = m_new
            p = gl.exp2(s - m_i[None, :])
            p_smem.store(p.to(gl.float16))
            fence_async_shared()
            gl.thread_barrier()
        l_i = l_i + p
        o_even = warpgroup_mma(v_even, p_smem.slice(0, HALF, dim=0), o_even, is_async=True)
        o_odd = warpgroup_mma(v_odd, p_smem.slice(0, HALF, dim=0), o_odd, is_async=True)
        raw = v_pairs.index(t % STAGES).slice(HALF, HALF, dim=0).permute([1, 0]).load(V_OP)
        o_even, o_odd = warpgroup_mma_wait(num_outstanding=0, deps=(o_even, o_odd))
        v_even, v_odd = fp8_pairs_to_fp16(raw)
        o_even = warpgroup_mma(v_even, p_smem.slice(HALF, HALF, dim=0), o_even, is_async=True)
        o_odd = warpgroup_mma(v_odd, p_smem.slice(HALF, HALF, dim=0), o_odd, is_async=True)
        o_even, o_odd = warpgroup_mma_wait(num_outstanding=0, deps=(o_even, o_odd))
    async_copy.wait_group(0)

    # heads that saw no key (an empty row, or a segment of invalid selections) write 0 and lse -inf
    l_sum = gl.sum(l_i, axis=0)
    OUT: gl.constexpr = gl.BlockedLayout([1, 8], [32 * 8 // D, D // 8], [WARPS, 1], [1, 0])
    # O^T's halves back into rows of heads
    o, has_keys = interleaved_rows(o_even, o_odd, l_sum, load_scale(v_scale_ptr, v_scale_value, V_SCALE_TENSOR), OUT)
    offs_ho = gl.arange(0, HN, layout=gl.SliceLayout(1, OUT))
    cols = gl.arange(0, D, layout=gl.SliceLayout(0, OUT))
    if SPLIT:
        rows_o = (split * num_rows + row) * NUM_Q_HEADS + kv_head * GROUP + offs_ho
        gl.store(part_ptr + (rows_o * D)[:, None] + cols[None, :], o, mask=(offs_ho < GROUP)[:, None])
        lse = gl.where(has_keys, m_i + gl.log2(gl.where(has_keys, l_sum, 1.0)), float("-inf"))
        gl.store(lse_ptr + part_rows, lse, mask=head_ok)
    else:
        gl.store(out_ptr + row * stride_o_row + ((kv_head * GROUP + offs_ho) * stride_o_head)[:, None] + cols[None, :],
                 o.to(out_ptr.dtype.element_ty), mask=(offs_ho < GROUP)[:, None])


def keys_rows_constants(num_q_heads: int, group: int, head: int, page: int, q_bf16: bool, splits: int,
                        dense: bool) -> dict:
    """The kernel's shape constexprs: N (HN) = the group rounded up to a power of two, at least wgmma's
    8; two q terms for bf16 q, three for fp16."""
    return dict(NUM_Q_HEADS=num_q_heads, GROUP=group, HN=max(8, 1 << (group - 1).bit_length()), D=head, PAGE=page,
                SPLIT=splits > 1, TERMS=2 if q_bf16 else 3, DENSE_PAGES=dense)


def launch_sparse_keys_rows(
    q, k_cache, v_cache, out, indices, block_table, token_to_req, counts, *,
    softmax_scale: float, k_scale, v_scale, profile: LaunchProfile,
) -> None:
    """Resolve selections to physical tokens, then launch with the given profile; decides nothing."""
    num_rows, num_q_heads, head = q.shape
    page, num_kv_heads = k_cache.shape[1:3]
    splits = profile.num_splits
    call = prepare_sparse_call(q, k_cache, out, indices, block_table, token_to_req, counts, k_scale, v_scale, splits,
                               head, lambda topk: token_row_width(topk, KEYS_ROWS_TILE, profile.num_stages, splits))
    if call is None:
        return
    k_is_t, v_is_t = call.scales_as_tensors
    sparse_keys_rows_kernel[(num_rows, num_kv_heads, splits)](
        *call.kernel_args(q, k_cache, v_cache, out, counts, softmax_scale, splits),
        **keys_rows_constants(num_q_heads, num_q_heads // num_kv_heads, head, page, q.dtype == torch.bfloat16, splits,
                              dense_pages(k_cache, v_cache)),
        STAGES=profile.num_stages, HAS_COUNTS=counts is not None, K_SCALE_TENSOR=k_is_t, V_SCALE_TENSOR=v_is_t,
        num_warps=KEYS_ROWS_WARPS,
    )
    if splits > 1:
        launch_merge(call.part, call.lse, out)
