"""v42: build build/v42/ukr_dsplit.py, the unified keys-as-rows kernel (v41's library, commit BASE) with its head
dimension split across two programs for P.V: each program of a (sequence, KV head, segment) computes the whole S^T
(K read in full, from L2 for the second of the two) but keeps only its half of O^T's head dimensions, so at 64 packed
rows O^T takes 64 instead of 128 fp32 registers per thread on one warpgroup (64 keys per step, 4 warps) and two
programs share an SM (perf-notes v42 item 6). The two halves are neighbours in the grid's first axis, so they run at
the same time and the second K read hits L2 (v8 item 2's split lost because its halves did not run together and read
K from HBM twice). K is copied with 32 bytes per thread, V's half with 16, over the same rows. Both halves compute the
same scores, maxima and sums; half 0 writes lse. One query block per sequence and split launches only (the probe
asserts both).
Usage: make_dsplit.py (from the repository root); the launcher is `launch_dsplit(..., profile)`."""
import sys
from pathlib import Path
sys.path.insert(0, "scripts")
from variant_source import absolute_imports, git_show, replaced  # noqa: E402

OUT = Path("build/v42")
BASE = "ac91ab5"  # v41's last commit
KERNEL = "pagedattn/ops/unified_keys_rows.py"

HELPERS = '''

@gluon.jit
def _issue_tile_halves(k_ptr, v_ptr, k_smem, v_smem, usable_smem, phys, ok, t, k_head, v_head, stride_k_block,
                       stride_k_slot, stride_v_block, stride_v_slot, TILE_N: gl.constexpr, D: gl.constexpr,
                       DV: gl.constexpr, PAGE: gl.constexpr, STAGES: gl.constexpr, COPY: gl.constexpr,
                       VCOPY: gl.constexpr):
    """`_issue_tile` with all of K's head dimensions (COPY) and DV of V's from v_head on (VCOPY, the same rows)."""
    slot = gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY)) % PAGE
    phys = phys.to(gl.int64)
    k_rows = phys * stride_k_block + slot * stride_k_slot + k_head
    async_copy.async_copy_global_to_shared(k_smem.index(t % STAGES),
                                           k_ptr + k_rows[:, None] + gl.arange(0, D, layout=gl.SliceLayout(0, COPY))[None, :],
                                           mask=ok[:, None])
    v_rows = gl.convert_layout(phys * stride_v_block + slot * stride_v_slot + v_head, gl.SliceLayout(1, VCOPY))
    v_ok = gl.convert_layout(ok, gl.SliceLayout(1, VCOPY))
    async_copy.async_copy_global_to_shared(v_smem.index(t % STAGES),
                                           v_ptr + v_rows[:, None] + gl.arange(0, DV, layout=gl.SliceLayout(0, VCOPY))[None, :],
                                           mask=v_ok[:, None])
    async_copy.commit_group()
    usable_smem.index(t % STAGES).store(ok.to(gl.int8))
'''

EDITS = (
    ("    K_SCALE_TENSOR: gl.constexpr, V_SCALE_TENSOR: gl.constexpr, MULTI_BLOCK: gl.constexpr,\n):",
     "    K_SCALE_TENSOR: gl.constexpr, V_SCALE_TENSOR: gl.constexpr, MULTI_BLOCK: gl.constexpr,\n    D_PARTS: gl.constexpr,\n):"),
    ("    seq, q_first, q_len, kv_len = _query_block(cu_q_ptr, seq_lens_ptr, q_blocks, HN // GROUP, MULTI_BLOCK)\n",
     """    DV: gl.constexpr = D // D_PARTS  # this program's head dimensions of O^T
    seq = gl.program_id(0) // D_PARTS
    part = gl.program_id(0) % D_PARTS
    q_first = gl.load(cu_q_ptr + seq)
    q_len = gl.load(cu_q_ptr + seq + 1) - q_first
    kv_len = gl.load(seq_lens_ptr + seq, volatile=True)
"""),
    ("    COPY: gl.constexpr = gl.BlockedLayout([1, 16], [32 * 16 // D, D // 16], [WARPS, 1], [1, 0])\n",
     """    COPY: gl.constexpr = gl.BlockedLayout([1, D // 8], [4, 8], [WARPS, 1], [1, 0])
    VCOPY: gl.constexpr = gl.BlockedLayout([1, DV // 8], [4, 8], [WARPS, 1], [1, 0])
"""),
    ("    v_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D], gl.SwizzledSharedLayout(16, 1, 8, order=[1, 0]))\n"
     "    v_pairs = v_ring._reinterpret(gl.int16, [STAGES, TILE_N, D // 2], gl.SwizzledSharedLayout(8, 1, 8, order=[1, 0]))\n",
     "    v_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, DV], gl.SwizzledSharedLayout(16, 1, 8, order=[1, 0]))\n"
     "    v_pairs = v_ring._reinterpret(gl.int16, [STAGES, TILE_N, DV // 2], gl.SwizzledSharedLayout(8, 1, 8, order=[1, 0]))\n"),
    ("    v_head = kv_head * stride_v_head\n", "    v_head = kv_head * stride_v_head + part * DV\n"),
    ("""    _fill_ring(k_ptr, v_ptr, k_ring, v_ring, usable_smem, table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks,
               k_head, v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
               SAME_STRIDES, COPY)
""", """    for ahead in gl.static_range(STAGES - 1):
        phys, ok = _tile_pages(table_row, tile_lo + ahead, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        _issue_tile_halves(k_ptr, v_ptr, k_ring, v_ring, usable_smem, phys, ok, tile_lo + ahead, k_head, v_head,
                           stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, DV, PAGE, STAGES,
                           COPY, VCOPY)
"""),
    ("""    o_even = gl.zeros([D // 2, HN], gl.float32, O_MMA)
    o_odd = gl.zeros([D // 2, HN], gl.float32, O_MMA)
""", """    o_even = gl.zeros([DV // 2, HN], gl.float32, O_MMA)
    o_odd = gl.zeros([DV // 2, HN], gl.float32, O_MMA)
"""),
    ("""        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, t + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
""", """        _issue_tile_halves(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, t + STAGES - 1, k_head,
                           v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, DV, PAGE,
                           STAGES, COPY, VCOPY)
"""),
    ("""        has_keys = _store_interleaved_rows(o_even, o_odd, l_sum, v_scale, part_ptr + part_cols * D, col_ok)
        lse = gl.where(has_keys, m_i + gl.log2(gl.where(has_keys, l_sum, 1.0)), float("-inf"))
        gl.store(lse_ptr + part_cols, lse, mask=col_ok)
""", """        has_keys = _store_interleaved_rows(o_even, o_odd, l_sum, v_scale, part_ptr + part_cols * D + part * DV, col_ok)
        lse = gl.where(has_keys, m_i + gl.log2(gl.where(has_keys, l_sum, 1.0)), float("-inf"))
        gl.store(lse_ptr + part_cols, lse, mask=col_ok & (part == 0))
"""),
    ("""    unified_keys_rows_kernel[(seq_lens.shape[0] * q_blocks, num_kv_heads, splits)](""",
     """    assert splits > 1 and q_blocks == 1, "the probe runs split launches of one query block per sequence"
    unified_keys_rows_kernel[(seq_lens.shape[0] * 2, num_kv_heads, splits)]("""),
    ("""        MULTI_BLOCK=q_blocks > 1, num_warps=profile.num_warps,
        maxnreg=keys_rows_register_cap(profile, head, DeviceInfo.current(q.device.index)),""",
     """        MULTI_BLOCK=q_blocks > 1, D_PARTS=2, num_warps=profile.num_warps,"""),
    ("\n\n@gluon.jit\ndef _store_interleaved_rows(", HELPERS + "\n\n@gluon.jit\ndef _store_interleaved_rows("),
)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "ukr_dsplit.py").write_text(replaced(absolute_imports(git_show(f"{BASE}:{KERNEL}")), *EDITS))


if __name__ == "__main__":
    main()
