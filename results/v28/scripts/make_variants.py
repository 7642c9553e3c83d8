"""v28: build the kernel files calls 2, 3 and 6 ran into build/v28 (ignored; the calls carried it):
  ukr_main.py          main's pagedattn/ops/unified_keys_rows.py (9972be3), relative imports made absolute;
  ukr_two_chains.py    Q.K^T's two e4m3 terms on two accumulators, added after their wait (call 2);
  ukr_hi_only.py       q's high e4m3 term alone: a timing probe whose results are off by design (call 2);
  ukr_fence_first.py   the fence before Q.K^T's wgmma moved ahead of the next tile's copies and table read (call 3);
  ukr_copies_late.py   the next tile's copies and table read issued after the softmax's barriers, before P.V (call 3);
  ukr_tma.py           call 1's TMA form without a copy warp (branch wip/tma-pages, results/v28/scripts/ukr_tma.py);
  ukr_tma_nofix.py     the same without zeroing the keys past the length in V (call 6, poison_check.py).
Each variant asserts that the text it replaces occurs once (`scripts/variant_source.replaced`).
Usage: make_variants.py (from the repository root)"""
import sys
from pathlib import Path
sys.path.insert(0, "scripts")
from variant_source import absolute_imports, git_show, replaced  # noqa: E402

OUT = Path("build/v28")


SCORES = """        s = warpgroup_mma(k_tile, q_hi_smem.permute([1, 0]), gl.zeros([TILE_N, HN], gl.float32, S_MMA),
                          use_acc=False, is_async=True)
        s = warpgroup_mma(k_tile, q_lo_smem.permute([1, 0]), s, is_async=True)
"""
SCORES_WAIT = "        s = warpgroup_mma_wait(num_outstanding=0, deps=(s,))\n"
TWO_CHAINS = """        s_hi = warpgroup_mma(k_tile, q_hi_smem.permute([1, 0]), gl.zeros([TILE_N, HN], gl.float32, S_MMA),
                             use_acc=False, is_async=True)
        s_lo = warpgroup_mma(k_tile, q_lo_smem.permute([1, 0]), gl.zeros([TILE_N, HN], gl.float32, S_MMA),
                             use_acc=False, is_async=True)
"""
TWO_CHAINS_WAIT = """        s_hi, s_lo = warpgroup_mma_wait(num_outstanding=0, deps=(s_hi, s_lo))
        s = s_hi + s_lo
"""
TOP = """        async_copy.wait_group(STAGES - 2)
        gl.thread_barrier()  # tile t landed for every warp; all are done with tile t - 1's slot and P^T
"""
COPIES = """        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, t + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
        phys, ok = _tile_pages(table_row, t + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        pages = gl.where(ok, phys, -1)
"""
FENCE = "        fence_async_shared()\n"
ROW_SUMS = "        l_i = l_i + gl.sum(gl.reshape(p, [WARPS, 2, TILE_N // WARPS // 2, HN]), axis=1)\n"
NO_ZEROING = "        if False:  # the zero-fill of keys past the length removed (results/v28/scripts/poison_check.py)\n"
ZEROING = "        if t * TILE_N + TILE_N > kv_len:  # the sequence's last tile: its last page's keys past the length zeroed in V\n"

OUT.mkdir(parents=True, exist_ok=True)
main = absolute_imports(git_show("9972be3:pagedattn/ops/unified_keys_rows.py"))
tma = git_show("wip/tma-pages:results/v28/scripts/ukr_tma.py")
files = {
    "ukr_main": main,
    "ukr_two_chains": replaced(main, (SCORES, TWO_CHAINS), (SCORES_WAIT, TWO_CHAINS_WAIT)),
    "ukr_hi_only": replaced(main, (SCORES, SCORES.split("        s = warpgroup_mma(k_tile, q_lo")[0])),
    "ukr_fence_first": replaced(main, (TOP + COPIES + FENCE, TOP + FENCE + COPIES)),
    "ukr_copies_late": replaced(main, (TOP + COPIES + FENCE, TOP + FENCE), (ROW_SUMS, COPIES + ROW_SUMS)),
    "ukr_tma": tma,
    "ukr_tma_nofix": replaced(tma, (ZEROING, NO_ZEROING)),
}
for name, text in files.items():
    (OUT / f"{name}.py").write_text(text)
    print(OUT / f"{name}.py")
