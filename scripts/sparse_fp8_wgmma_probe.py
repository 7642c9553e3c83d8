"""Probe for the next FP8 sparse kernel: the selected keys as the rows of Hopper's warpgroup MMA.

With 16 query heads per program the library's FP8 sparse kernels run on mma.sync, whose operands on
sm90 are 16-bit: every K and V byte is converted to fp16 (an e4m3 mma.sync compiles to the same
conversions, perf-notes v13 item 6). wgmma takes e4m3 operands but needs 64 rows; here the rows are
64 selected keys and the query heads are its N (8 or 16):

* S^T = K . Q^T on FP8 wgmma, K straight from the cp.async ring (no conversion), Q as the sum of
  two e4m3 tiles (three for fp16 q) scaled by a power of two per head that puts the head's largest
  |q| into [2^7, 2^8): the second tile holds the first's rounding error, exactly for bf16 q;
* the softmax runs down the keys; each warp's largest growth over the running base is exchanged
  with P^T (ops/sparse_exchange.py's lazy rescaling, here over four warps);
* O^T = V^T . P^T on fp16 wgmma, V converted in registers (the int16-pair trick of
  ops/sparse_exchange.py) as the A operand, P^T from shared memory; P.V runs in two halves of the
  tile's keys so that only half of V's fp16 fragments are live (152 registers at 16 heads instead of
  193: three programs per SM).

Not part of the library. Measured on the H200 (perf-notes v13 items 6 and 8): at 8,192 rows FP8
TP4 / TP8 1.209 / 1.224 ms against the exchange kernel's 1.269 / 1.255 (0.69x / 0.70x of BF16), but
TP2 / TP1 1.410 / 2.750 against 1.284 / 2.498 and 520 rows 0.121 against 0.087. Simplifications:
FP8 pages only, head size 128 or 256 (D / 2 >= 64 wgmma rows), groups of at most 16, 64-key tiles,
P.V waited for at the end of each tile (no overlap with the next tile's scores yet).

    TRITON_INTERPRET=0 python3 scripts/sparse_fp8_wgmma_probe.py compile        # offline sm90 build report
    python3 scripts/sparse_fp8_wgmma_probe.py run OUT.json                       # GPU: A/B on the bench's FP8 cases
"""

import json
import os
import sys
from pathlib import Path

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, warpgroup_mma, warpgroup_mma_wait

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pagedattn.ops.common import LOG2E, RESCALE_SLACK, launch_merge, scale_args, split_workspace  # noqa: E402
from pagedattn.ops.sparse import resolve_selections  # noqa: E402
from pagedattn.ops.sparse_exchange import _fp8_pairs_to_fp16, _issue_tile, _scale, _token_ids  # noqa: E402

WARPS = gl.constexpr(4)
TILE_N = 64  # one wgmma's rows
STAGES = 2


@gluon.jit
def _q_terms(q_ptr, row, kv_head, stride_q_row, stride_q_head, HN: gl.constexpr, GROUP: gl.constexpr,
             D: gl.constexpr, TERMS: gl.constexpr, Q_LOAD: gl.constexpr, Q_SMEM: gl.constexpr):
    """q of the row's GROUP heads as TERMS e4m3 tiles in shared memory that sum to q x 2^k per head
    (k puts the head's largest |q| into [2^7, 2^8), e4m3 holds up to 448); returns them and 2^-k."""
    offs_h = gl.arange(0, HN, layout=gl.SliceLayout(1, Q_LOAD))
    q = gl.load(q_ptr + row * stride_q_row + (kv_head * GROUP + offs_h)[:, None] * stride_q_head
                + gl.arange(0, D, layout=gl.SliceLayout(0, Q_LOAD))[None, :], mask=(offs_h < GROUP)[:, None],
                other=0.0).to(gl.float32)
    amax = gl.max(gl.abs(q), axis=1)
    exponent = (amax.to(gl.int32, bitcast=True) >> 23) & 0xFF  # amax in [2^(e - 127), 2^(e - 126))
    up = gl.where(amax > 0.0, ((261 - exponent) << 23).to(gl.float32, bitcast=True), 1.0)  # 2^(134 - e)
    down = gl.where(amax > 0.0, ((exponent - 7) << 23).to(gl.float32, bitcast=True), 1.0)  # 2^(e - 134)
    rest = q * up[:, None]
    hi = rest.to(gl.float8e4nv)
    q_hi = gl.allocate_shared_memory(gl.float8e4nv, [HN, D], Q_SMEM, hi)
    rest = rest - hi.to(gl.float32)
    mid = rest.to(gl.float8e4nv)
    q_mid = gl.allocate_shared_memory(gl.float8e4nv, [HN, D], Q_SMEM, mid)
    q_lo = q_mid
    if TERMS == 3:
        q_lo = gl.allocate_shared_memory(gl.float8e4nv, [HN, D], Q_SMEM, (rest - mid.to(gl.float32)).to(gl.float8e4nv))
    return q_hi, q_mid, q_lo, down


@gluon.jit(do_not_specialize=["num_rows"])
def sparse_keys_as_rows_kernel(
    q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr, tokens_ptr, k_scale_ptr, v_scale_ptr,
    k_scale_value, v_scale_value, softmax_scale, num_rows, topk, num_splits,
    stride_q_row, stride_q_head, stride_k_block, stride_k_slot, stride_k_head,
    stride_v_block, stride_v_slot, stride_v_head, stride_o_row, stride_o_head,
    NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, HN: gl.constexpr, D: gl.constexpr, PAGE: gl.constexpr,
    TILE_N: gl.constexpr, STAGES: gl.constexpr, SPLIT: gl.constexpr, TERMS: gl.constexpr,
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
    GROWTH_ALL: gl.constexpr = gl.BlockedLayout([WARPS], [32], [WARPS], [0])

    per_split = gl.cdiv(gl.cdiv(topk, num_splits), TILE_N) * TILE_N
    lo = split * per_split
    hi = gl.minimum(lo + per_split, topk)
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
                                                   * _scale(k_scale_ptr, k_scale_value, K_SCALE_TENSOR))
    k_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D],
                                       gl.NVMMASharedLayout.get_default_for([TILE_N, D], gl.float8e4nv))
    v_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D],
                                       gl.SwizzledSharedLayout(16, 1, 8, order=[1, 0]))
    v_pairs = v_ring._reinterpret(gl.int16, [STAGES, TILE_N, D // 2], gl.SwizzledSharedLayout(8, 1, 8, order=[1, 0]))
    bias_ring = gl.allocate_shared_memory(gl.float32, [STAGES, TILE_N], FLAT)
    p_smem = gl.allocate_shared_memory(gl.float16, [TILE_N, HN], gl.NVMMASharedLayout.get_default_for([TILE_N, HN],
                                                                                                      gl.float16))
    growth_smem = gl.allocate_shared_memory(gl.float32, [WARPS], FLAT)

    tokens_row = tokens_ptr + row * topk
    k_base = k_ptr + kv_head * stride_k_head
    v_base = v_ptr + kv_head * stride_v_head
    for ahead in gl.static_range(STAGES - 1):
        _issue_tile(k_base, v_base, k_ring, v_ring, bias_ring, _token_ids(tokens_row, lo, hi, ahead, TILE_N, COPY),
                    ahead, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, D, PAGE, STAGES, DENSE_PAGES,
                    COPY)
    token_next = _token_ids(tokens_row, lo, hi, STAGES - 1, TILE_N, COPY)
    o_even = gl.zeros([D // 2, HN], gl.float32, O_MMA)
    o_odd = gl.zeros([D // 2, HN], gl.float32, O_MMA)
    m_i = gl.full([HN], -1.0e30, gl.float32, HEADS)
    l_i = gl.zeros([TILE_N, HN], gl.float32, S_MMA)
    for t in range(0, gl.cdiv(hi - lo, TILE_N)):
        async_copy.wait_group(STAGES - 2)
        gl.thread_barrier()  # tile t landed for every warp; all are done with tile t - 1's slot and P
        _issue_tile(k_base, v_base, k_ring, v_ring, bias_ring, token_next, t + STAGES - 1, stride_k_block,
                    stride_k_slot, stride_v_block, stride_v_slot, D, PAGE, STAGES, DENSE_PAGES, COPY)
        token_next = _token_ids(tokens_row, lo, hi, t + STAGES, TILE_N, COPY)
        fence_async_shared()
        k_tile = k_ring.index(t % STAGES)
        s = warpgroup_mma(k_tile, q_hi.permute([1, 0]), gl.zeros([TILE_N, HN], gl.float32, S_MMA), use_acc=False,
                          is_async=True)
        s = warpgroup_mma(k_tile, q_mid.permute([1, 0]), s, is_async=True)
        if TERMS == 3:
            s = warpgroup_mma(k_tile, q_lo.permute([1, 0]), s, is_async=True)
        v_even, v_odd = _fp8_pairs_to_fp16(v_pairs.index(t % STAGES).slice(0, HALF, dim=0).permute([1, 0]).load(V_OP))
        bias = bias_ring.index(t % STAGES).load(KEYS)
        s = warpgroup_mma_wait(num_outstanding=0, deps=(s,))
        s = s * head_scale[None, :] + bias[:, None]
        growth = s - m_i[None, :]
        p = gl.exp2(growth)
        # warp w holds keys 16w .. 16w + 15 of the tile: its largest growth over them and all heads
        growth_smem.store(gl.max(gl.max(gl.reshape(growth, [WARPS, TILE_N // WARPS, HN]), axis=2), axis=1))
        p_smem.store(p.to(gl.float16))
        fence_async_shared()
        gl.thread_barrier()  # every warp's P^T rows and growth
        if gl.max(growth_smem.load(GROWTH_ALL), axis=0) > RESCALE_SLACK:
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
        v_even, v_odd = _fp8_pairs_to_fp16(raw)
        o_even = warpgroup_mma(v_even, p_smem.slice(HALF, HALF, dim=0), o_even, is_async=True)
        o_odd = warpgroup_mma(v_odd, p_smem.slice(HALF, HALF, dim=0), o_odd, is_async=True)
        o_even, o_odd = warpgroup_mma_wait(num_outstanding=0, deps=(o_even, o_odd))
    async_copy.wait_group(0)

    l_sum = gl.sum(l_i, axis=0)
    has_keys = l_sum > 0.0
    o_scale = gl.where(has_keys, _scale(v_scale_ptr, v_scale_value, V_SCALE_TENSOR) / gl.where(has_keys, l_sum, 1.0),
                       0.0)
    o_scale = gl.convert_layout(o_scale, gl.SliceLayout(0, O_MMA))
    OUT: gl.constexpr = gl.BlockedLayout([1, 8], [32 * 8 // D, D // 8], [WARPS, 1], [1, 0])
    # O^T's even and odd head dimensions interleaved back into rows of heads
    o = gl.reshape(gl.permute(gl.join(o_even * o_scale[None, :], o_odd * o_scale[None, :]), [1, 0, 2]), [HN, D])
    o = gl.convert_layout(o, OUT)
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


def _constants(num_q_heads: int, group: int, head: int, page: int, q_bf16: bool, splits: int, dense: bool) -> dict:
    """The kernel's constexprs: N (HN) = the group rounded up to a power of two, at least wgmma's 8."""
    return dict(NUM_Q_HEADS=num_q_heads, GROUP=group, HN=max(8, 1 << (group - 1).bit_length()), D=head, PAGE=page,
                TILE_N=TILE_N, STAGES=STAGES, SPLIT=splits > 1, TERMS=2 if q_bf16 else 3, DENSE_PAGES=dense)


def launch(q, k_cache, v_cache, out, indices, block_table, token_to_req, *, softmax_scale, k_scale, v_scale,
           splits=1):
    num_rows, num_q_heads, head = q.shape
    num_blocks, page, num_kv_heads, _ = k_cache.shape
    tokens = resolve_selections(indices, None, block_table, token_to_req, num_blocks, page)
    part, lse = split_workspace(splits, num_rows, num_q_heads, head, out)
    k_scale_t, k_scale_v, k_is_t = scale_args(k_scale)
    v_scale_t, v_scale_v, v_is_t = scale_args(v_scale)
    constants = _constants(num_q_heads, num_q_heads // num_kv_heads, head, page, q.dtype == torch.bfloat16, splits,
                           all(c.stride(0) == page * c.stride(1) for c in (k_cache, v_cache)))
    sparse_keys_as_rows_kernel[(num_rows, num_kv_heads, splits)](
        q, k_cache, v_cache, out, part, lse, tokens, k_scale_t, v_scale_t, k_scale_v, v_scale_v, softmax_scale,
        num_rows, indices.shape[1], splits, q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1),
        k_cache.stride(2), v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), out.stride(0), out.stride(1),
        **constants, K_SCALE_TENSOR=k_is_t, V_SCALE_TENSOR=v_is_t, num_warps=4,
    )
    if splits > 1:
        launch_merge(part, lse, out)


def compile_offline(group: int, head: int = 256) -> dict:
    """Registers, stack bytes, shared memory, wgmma serialization and SASS counts of the sm90 build
    (no GPU needed), from `scripts/compile_report.py`'s build and report."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import compile_report
    from triton.experimental.gluon._runtime import GluonASTSource
    kernel = sparse_keys_as_rows_kernel
    ptrs = {"q_ptr": "*bf16", "k_ptr": "*fp8e4nv", "v_ptr": "*fp8e4nv", "out_ptr": "*bf16", "part_ptr": "*fp32",
            "lse_ptr": "*fp32", "tokens_ptr": "*i32"}
    sig, const = compile_report._signature(kernel, ptrs, {"k_scale_value", "v_scale_value", "softmax_scale"},
                                           {"k_scale_ptr", "v_scale_ptr"})
    const.update(_constants(group, group, head, 16, True, 1, True), K_SCALE_TENSOR=False, V_SCALE_TENSOR=False)
    return compile_report._compile(kernel, sig, const, 4, 1, source=GluonASTSource)


CASES = ["rows=8192 12q/1kv d256 fp8", "rows=8192 24q/2kv d256 fp8", "rows=8192 6q/1kv d256 fp8",
         "rows=8192 3q/1kv d256 fp8", "rows=520 12q/1kv d256 fp8"]


def run(path: str) -> None:
    """Graph-timed A/B against the library's call (its table profile) on the bench's FP8 sparse cases."""
    import pagedattn
    from pagedattn import reference
    from pagedattn.bench import _input_sets
    from pagedattn.timing import time_calls
    from pagedattn.workloads import get_workload
    rows = []
    for label in CASES:
        case = next(c for c in get_workload("sparse-prefill").cases if c.label == label)
        sets = _input_sets(case, "cuda")
        expected = reference.sparse_attention(**sets[0].kwargs)
        outs = [torch.full_like(s.kwargs["q"], float("nan")) for s in sets]
        library = [lambda s=s, o=o: pagedattn.sparse_attention(**s.kwargs, out=o) for s, o in zip(sets, outs)]

        def probe(s, o):
            k = s.kwargs
            launch(k["q"], k["k_cache"], k["v_cache"], o, k["indices"], k["block_table"], k["token_to_req"],
                   softmax_scale=k.get("softmax_scale") or k["q"].shape[-1] ** -0.5, k_scale=k["k_scale"],
                   v_scale=k["v_scale"])
        row = {"case": label, "library_ms": time_calls(library)}
        probe(sets[0], outs[0])
        row["rel_l2"] = reference.rel_l2(outs[0], expected)
        row["probe_ms"] = time_calls([lambda s=s, o=o: probe(s, o) for s, o in zip(sets, outs)])
        rows.append(row)
        print(json.dumps(row), flush=True)
    with open(path, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["compile"]:
        for group in (12, 3):
            print(json.dumps({"group": group} | compile_offline(group)), flush=True)
    elif sys.argv[1:2] == ["run"] and len(sys.argv) == 3:
        run(sys.argv[2])
    else:
        sys.exit(__doc__)
