"""Probe for the next verify kernel: MTP verify (BF16 K/V, 16q/1kv, 4 draft tokens, D=256) written in
Gluon with FlashAttention-2's layout — mma.sync with each of the 4 warps owning 16 of the 64 rows, so
the softmax needs no cross-warp step — K/V tiles streamed through shared memory with cp.async
(STAGES buffers), split-KV partials merged by pagedattn's merge kernel. Not part of the library:
Triton's own layout choice does not reach this schedule (perf-notes v7 item 7), so this measures
what writing it out buys before any library work (perf-notes v7 item 10, v8).

Variants (`VARIANTS`, measured in perf-notes v8): `v1` as above; `one-barrier` publishes a tile and
retires the previous one's reads with one barrier instead of two; `d-split` gives each half of the
head dimension of the output its own program (both compute the full Q.K^T: accumulator registers
halve, K is read twice); `+q-smem` reads Q from shared memory for every tile instead of holding it
in registers (126 registers with d-split).

The wgmma kernel this probe led to is in the library now (`pagedattn/ops/verify_wgmma.py`, profile
flag `warpgroup_mma`; perf-notes v9); the probe keeps the mma.sync variants it was measured against.

Simplifications against `ops/unified.py`: uniform query length, BF16 only, head size a multiple of
4 x 16, K and V with the same strides, the causal mask on every tile, no window/softcap/sinks, page
ids trusted, and the running maximum rescales the accumulator every tile (no lazy rescaling).

    TRITON_INTERPRET=0 python3 scripts/gluon_verify_probe.py compile [VARIANT ...]   # offline sm90 build report
    PYTHONPATH=. python3 scripts/gluon_verify_probe.py run OUT.json [VARIANT:SPLITS:TILE:STAGES ...]  # GPU
"""

import functools
import json
import os
import sys

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy, mma_v2

LOG2E = 1.4426950408889634


@gluon.jit
def _issue_tile(k_ptr, v_ptr, k_smem, v_smem, table_row, t, tile_hi, kv_len, max_blocks, k_off, v_off,
                stride_block, stride_slot,
                TILE_N: gl.constexpr, D: gl.constexpr, D_OUT: gl.constexpr, PAGE: gl.constexpr,
                STAGES: gl.constexpr, COPY: gl.constexpr):
    """cp.async of tile t's K rows (all D columns) and V rows (this program's D_OUT columns)."""
    offs_n = gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY))
    pos = t * TILE_N + offs_n
    ok = (pos < kv_len) & (t < tile_hi)
    page = pos // PAGE
    phys = gl.load(table_row + page, mask=ok & (page < max_blocks), other=0)
    rows = phys.to(gl.int64) * stride_block + (pos % PAGE) * stride_slot
    k_cols = gl.arange(0, D, layout=gl.SliceLayout(0, COPY))
    v_cols = gl.arange(0, D_OUT, layout=gl.SliceLayout(0, COPY))
    async_copy.async_copy_global_to_shared(k_smem.index(t % STAGES), k_ptr + k_off + rows[:, None] + k_cols[None, :],
                                           mask=ok[:, None])
    async_copy.async_copy_global_to_shared(v_smem.index(t % STAGES), v_ptr + v_off + rows[:, None] + v_cols[None, :],
                                           mask=ok[:, None])
    async_copy.commit_group()


@gluon.jit
def _split_tiles(seq_lens_ptr, seq, split, num_splits, TILE_N: gl.constexpr):
    """(KV length, first tile, end tile) of this program's split of the sequence's KV range."""
    kv_len = gl.load(seq_lens_ptr + seq)
    num_tiles = gl.cdiv(kv_len, TILE_N)
    per_split = gl.cdiv(num_tiles, num_splits)
    tile_lo = split * per_split
    return kv_len, tile_lo, gl.minimum(tile_lo + per_split, num_tiles)


@gluon.jit
def _packed_rows(seq, kv_head, GROUP: gl.constexpr, Q_LEN: gl.constexpr, LAYOUT: gl.constexpr):
    """(query token, query head) of each of the GROUP x Q_LEN rows a program packs, in LAYOUT."""
    offs_m = gl.arange(0, GROUP * Q_LEN, layout=LAYOUT)
    return seq * Q_LEN + offs_m // GROUP, kv_head * GROUP + offs_m % GROUP


@gluon.jit
def verify_rows_per_warp_kernel(
    q_ptr, k_ptr, v_ptr, part_ptr, lse_ptr, seq_lens_ptr, table_ptr,
    scale_log2, num_tokens, num_splits, max_blocks,
    stride_q_tok, stride_q_head, stride_k_block, stride_k_slot, stride_k_head, stride_table,
    NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, Q_LEN: gl.constexpr, D: gl.constexpr,
    PAGE: gl.constexpr, TILE_N: gl.constexpr, STAGES: gl.constexpr, CHUNK: gl.constexpr,
    HALVES: gl.constexpr, Q_SMEM: gl.constexpr, ONE_BARRIER: gl.constexpr,
):
    M: gl.constexpr = GROUP * Q_LEN
    D_OUT: gl.constexpr = D // HALVES  # output columns of this program: HALVES programs share one Q.K^T
    seq = gl.program_id(0)
    kv_head = gl.program_id(1) // HALVES
    half = gl.program_id(1) % HALVES
    split = gl.program_id(2)

    MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 8])
    A_OP: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=MMA, k_width=2)
    B_OP: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=MMA, k_width=2)
    COPY: gl.constexpr = gl.BlockedLayout([1, 8], [1, 32], [4, 1], [1, 0])
    SMEM: gl.constexpr = gl.SwizzledSharedLayout(vec=8, per_phase=1, max_phase=8, order=[1, 0])
    ROWS: gl.constexpr = gl.SliceLayout(1, MMA)
    COLS: gl.constexpr = gl.SliceLayout(0, MMA)

    kv_len, tile_lo, tile_hi = _split_tiles(seq_lens_ptr, seq, split, num_splits, TILE_N)
    context = kv_len - Q_LEN

    offs_m = gl.arange(0, M, layout=ROWS)
    tok, head = _packed_rows(seq, kv_head, GROUP, Q_LEN, ROWS)
    part_rows = (split * num_tokens + tok).to(gl.int64) * NUM_Q_HEADS + head
    if tile_lo >= tile_hi:
        gl.store(lse_ptr + part_rows, gl.full([M], float("-inf"), gl.float32, ROWS))
        return

    q_rows = tok.to(gl.int64) * stride_q_tok + head * stride_q_head
    offs_c = gl.arange(0, CHUNK, layout=COLS)
    if Q_SMEM:  # Q read from shared memory for every tile: 64 registers fewer, more shared-memory reads
        q_smem = gl.allocate_shared_memory(gl.bfloat16, [M, D], SMEM)
        q_smem.store(gl.load(q_ptr + q_rows[:, None] + gl.arange(0, D, layout=COLS)[None, :]))
        gl.thread_barrier()
    else:  # Q: one [M, CHUNK] register operand per head-dimension chunk
        q0 = gl.convert_layout(gl.load(q_ptr + q_rows[:, None] + offs_c[None, :]), A_OP)
        q1 = gl.convert_layout(gl.load(q_ptr + q_rows[:, None] + (CHUNK + offs_c)[None, :]), A_OP)
        q2 = gl.convert_layout(gl.load(q_ptr + q_rows[:, None] + (2 * CHUNK + offs_c)[None, :]), A_OP)
        q3 = gl.convert_layout(gl.load(q_ptr + q_rows[:, None] + (3 * CHUNK + offs_c)[None, :]), A_OP)

    k_smem = gl.allocate_shared_memory(gl.bfloat16, [STAGES, TILE_N, D], SMEM)
    v_smem = gl.allocate_shared_memory(gl.bfloat16, [STAGES, TILE_N, D_OUT], SMEM)
    table_row = table_ptr + seq.to(gl.int64) * stride_table
    k_off = kv_head * stride_k_head
    v_off = k_off + half * D_OUT
    for pre in gl.static_range(STAGES - 1):
        _issue_tile(k_ptr, v_ptr, k_smem, v_smem, table_row, tile_lo + pre, tile_hi, kv_len, max_blocks, k_off,
                    v_off, stride_k_block, stride_k_slot, TILE_N, D, D_OUT, PAGE, STAGES, COPY)

    m_i = gl.full([M], -1.0e30, gl.float32, ROWS)
    l_i = gl.zeros([M], gl.float32, ROWS)
    acc0 = gl.zeros([M, CHUNK], gl.float32, MMA)
    acc1 = gl.zeros([M, CHUNK], gl.float32, MMA)
    if HALVES == 1:
        acc2 = gl.zeros([M, CHUNK], gl.float32, MMA)
        acc3 = gl.zeros([M, CHUNK], gl.float32, MMA)
    q_pos = context + offs_m // GROUP
    offs_n = gl.arange(0, TILE_N, layout=COLS)
    for t in range(tile_lo, tile_hi):
        if ONE_BARRIER:  # the barrier that publishes tile t also retires every warp's reads of tile t - 1
            async_copy.wait_group(STAGES - 2)
            gl.thread_barrier()
        _issue_tile(k_ptr, v_ptr, k_smem, v_smem, table_row, t + STAGES - 1, tile_hi, kv_len, max_blocks, k_off,
                    v_off, stride_k_block, stride_k_slot, TILE_N, D, D_OUT, PAGE, STAGES, COPY)
        if not ONE_BARRIER:
            async_copy.wait_group(STAGES - 1)
            gl.thread_barrier()
        k_t = k_smem.index(t % STAGES).permute([1, 0])  # [D, TILE_N]
        s = gl.zeros([M, TILE_N], gl.float32, MMA)
        if Q_SMEM:
            for c in gl.static_range(4):
                s = mma_v2(q_smem.slice(c * CHUNK, CHUNK, dim=1).load(A_OP),
                           k_t.slice(c * CHUNK, CHUNK, dim=0).load(B_OP), s)
        else:
            s = mma_v2(q0, k_t.slice(0, CHUNK, dim=0).load(B_OP), s)
            s = mma_v2(q1, k_t.slice(CHUNK, CHUNK, dim=0).load(B_OP), s)
            s = mma_v2(q2, k_t.slice(2 * CHUNK, CHUNK, dim=0).load(B_OP), s)
            s = mma_v2(q3, k_t.slice(3 * CHUNK, CHUNK, dim=0).load(B_OP), s)
        pos = t * TILE_N + offs_n
        visible = (pos[None, :] <= q_pos[:, None]) & (pos[None, :] < kv_len)
        s = gl.where(visible, s * scale_log2, float("-inf"))
        m_new = gl.maximum(m_i, gl.max(s, axis=1))
        alpha = gl.exp2(m_i - m_new)
        p = gl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + gl.sum(p, axis=1)
        m_i = m_new
        p_op = gl.convert_layout(p.to(gl.bfloat16), A_OP)
        v_t = v_smem.index(t % STAGES)  # [TILE_N, D_OUT]
        acc0 = mma_v2(p_op, v_t.slice(0, CHUNK, dim=1).load(B_OP), acc0 * alpha[:, None])
        acc1 = mma_v2(p_op, v_t.slice(CHUNK, CHUNK, dim=1).load(B_OP), acc1 * alpha[:, None])
        if HALVES == 1:
            acc2 = mma_v2(p_op, v_t.slice(2 * CHUNK, CHUNK, dim=1).load(B_OP), acc2 * alpha[:, None])
            acc3 = mma_v2(p_op, v_t.slice(3 * CHUNK, CHUNK, dim=1).load(B_OP), acc3 * alpha[:, None])
        if not ONE_BARRIER:
            gl.thread_barrier()
    async_copy.wait_group(0)

    inv = 1.0 / l_i
    out_rows = part_rows * D + half * D_OUT
    gl.store(part_ptr + out_rows[:, None] + offs_c[None, :], acc0 * inv[:, None])
    gl.store(part_ptr + out_rows[:, None] + (CHUNK + offs_c)[None, :], acc1 * inv[:, None])
    if HALVES == 1:
        gl.store(part_ptr + out_rows[:, None] + (2 * CHUNK + offs_c)[None, :], acc2 * inv[:, None])
        gl.store(part_ptr + out_rows[:, None] + (3 * CHUNK + offs_c)[None, :], acc3 * inv[:, None])
    gl.store(lse_ptr + part_rows, m_i + gl.log2(l_i))  # the HALVES programs store the same value


VARIANTS = {  # rows-per-warp (mma.sync) variants: name -> (HALVES, Q_SMEM, ONE_BARRIER)
    "v1": (1, False, False),
    "one-barrier": (1, False, True),
    "d-split": (2, False, False),
    "d-split+q-smem": (2, True, False),
    "d-split+q-smem+one-barrier": (2, True, True),
}


def _kernel_and_constants(variant, tile_n, stages, head):
    """The kernel of a variant and its variant-specific constexprs."""
    halves, q_smem, one_barrier = VARIANTS[variant]
    return verify_rows_per_warp_kernel, dict(HALVES=halves, Q_SMEM=q_smem, ONE_BARRIER=one_barrier, CHUNK=head // 4)


def launch(kw, splits, tile_n, stages, out, part, lse, variant="v1"):
    """The probe kernel then pagedattn's merge. pagedattn is imported inside the functions that run
    on the GPU: this module imports triton first, and on a CPU machine pagedattn then refuses to
    load unless TRITON_INTERPRET is set (the offline compile sets it to 0 through compile_report)."""
    from pagedattn.ops.common import launch_merge
    q, k, v = kw["q"], kw["k_cache"], kw["v_cache"]
    num_tokens, num_q_heads, head = q.shape
    _, page, num_kv_heads, _ = k.shape
    seqs = kw["seq_lens"].shape[0]
    kernel, constants = _kernel_and_constants(variant, tile_n, stages, head)
    kernel[(seqs, num_kv_heads * constants.get("HALVES", 1), splits)](
        q, k, v, part, lse, kw["seq_lens"], kw["block_table"],
        head ** -0.5 * LOG2E, num_tokens, splits, kw["block_table"].shape[1],
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), k.stride(2), kw["block_table"].stride(0),
        NUM_Q_HEADS=num_q_heads, GROUP=num_q_heads // num_kv_heads, Q_LEN=num_tokens // seqs, D=head,
        PAGE=page, TILE_N=tile_n, STAGES=stages, num_warps=4, **constants,
    )
    launch_merge(part, lse, out)


def compile_offline(tile_n: int, stages: int, variant: str = "v1") -> dict:
    """Registers, stack bytes, shared memory, wgmma serialization and SASS counts of the sm90 build
    (no GPU needed), from `scripts/compile_report.py`'s build and report."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import compile_report
    from triton.experimental.gluon._runtime import GluonASTSource
    kernel, constants = _kernel_and_constants(variant, tile_n, stages, 256)
    ptrs = {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "part_ptr": "*fp32", "lse_ptr": "*fp32",
            "seq_lens_ptr": "*i32", "table_ptr": "*i32"}
    sig, const = compile_report._signature(kernel, ptrs, {"scale_log2"}, set())
    const.update(NUM_Q_HEADS=16, GROUP=16, Q_LEN=4, D=256, PAGE=16, TILE_N=tile_n, STAGES=stages, **constants)
    return compile_report._compile(kernel, sig, const, 4, 1, source=GluonASTSource)


DEFAULT_CONFIGS = [("v1", 13, 32, 2), ("v1", 13, 16, 3)]  # the best v1 configurations (perf-notes v8 item 1)
LIBRARY_WGMMA = "m64/n16/s13/w4/st5/wgmma"  # the H200 table's profile of the library's wgmma kernel (v9)


def run(path, configs=DEFAULT_CONFIGS):
    import pagedattn
    from pagedattn import LaunchProfile, reference
    from pagedattn.timing import time_calls
    from pagedattn.workloads import get_workload
    rows = []
    for label, table_profile in [("B=20 q=4 kv=32768 16q/1kv d256 bf16", "m64/n16/s12/w4/st4/ahead"),
                                 ("B=20 q=4 kv=70000 16q/1kv d256 bf16", "m64/n32/s12/w4/st3"),
                                 ("B=20 q=4 kv=70000 32q/2kv d256 bf16", "m64/n16/s12/w4/st4/ahead")]:
        case = next(c for c in get_workload("mtp-verify").cases if c.label == label)
        kw = case.build("cuda").kwargs
        ref = reference.unified_attention(**kw)
        for kernel, short in (("pagedattn (Triton)", table_profile), ("pagedattn (wgmma)", LIBRARY_WGMMA)):
            out = torch.empty_like(kw["q"])
            call = functools.partial(pagedattn.unified_attention, **kw, out=out, profile=LaunchProfile.from_short(short))
            rows.append(dict(case=label, kernel=kernel, profile=short, ms=time_calls([call])))
            print(json.dumps(rows[-1]), flush=True)
        for variant, splits, tile_n, stages in configs:
            t, h, d = kw["q"].shape
            part = torch.empty(splits, t, h, d, dtype=torch.float32, device="cuda")
            lse = torch.empty(splits, t, h, dtype=torch.float32, device="cuda")
            out = torch.full_like(kw["q"], float("nan"))
            row = dict(case=label, kernel="gluon rows-per-warp", variant=variant, splits=splits, tile_n=tile_n,
                       stages=stages)
            try:
                launch(kw, splits, tile_n, stages, out, part, lse, variant)
                row["rel_l2"] = reference.rel_l2(out, ref)
                row["ms"] = time_calls([functools.partial(launch, kw, splits, tile_n, stages, out, part, lse,
                                                          variant)])
            except Exception as e:  # a probe: record what failed and go on
                row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            rows.append(row)
            print(json.dumps(row), flush=True)
    with open(path, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["compile"]:
        for variant in sys.argv[2:] or ["v1"]:
            for tile_n, stages in [(16, 3), (16, 4), (32, 3)]:
                print(json.dumps({"variant": variant, "tile_n": tile_n, "stages": stages}
                                 | compile_offline(tile_n, stages, variant)), flush=True)
    elif sys.argv[1:2] == ["run"] and len(sys.argv) >= 3:
        picked = [(v, int(sp), int(t), int(st)) for v, sp, t, st in (c.split(":") for c in sys.argv[3:])]
        run(sys.argv[2], picked or DEFAULT_CONFIGS)
    else:
        sys.exit(__doc__)
