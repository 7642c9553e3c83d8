"""v44: build the probe kernel files under build/v44 (ignored; run this from the repository root before the A/B
script, and carry build/v44 to the device). Each is a form of the library's ops/unified_keys_rows.py (the kernel that
runs FP8 MTP verify and both FP8 long requests) with its relative imports made absolute:
  ukr_base.py     the library's kernel as it is;
  ukr_pvpipe.py   P.V's next 32-key chunk of V read and converted while this chunk's two products run (the library
                  reads it then, and converts it only after the wait): a candidate, the same results;
  ukr_chunk64.py  P.V in 64-key chunks (two waits per 128-key step instead of four): a candidate, the same results;
  ukr_early.py    the first loop step's page-table entries read before the ring's first copies are issued, not after
                  them (call 7): a candidate, the same results; ptxas issues them after the copies all the same;
  ukr_qbar.py     q's load, the first tile's and the first loop step's page-table loads, then a barrier, then the
                  first tile's copies (2 stages only): ptxas had sunk q's load below the copies, where it waits
                  behind them (call 7): a candidate, the same results;
  vw_base.py      the library's ops/verify_wgmma.py (the kernel BF16 MTP verify runs) as it is (call 7);
  vw_fill.py      its prologue with every page-table load it needs (the ring's first three tiles' and the first loop
                  step's two) issued before any copy, then a barrier, then the copies, and q stored to shared memory
                  after them (4 stages only): ptxas issues each tile's table loads after the previous tile's copies,
                  three round trips in a row (call 7): a candidate, the same results;
  ukr_earlyv.py   the first step's entries as in ukr_early.py with those loads volatile, which ptxas keeps in their place (TILE_N a multiple of the
                  page size, as at every profile the kernel runs with pages of 16);
and knock-outs, which time the step without one or more parts of its chain (their outputs are wrong; timing only;
call 2 added the combinations and nolo):
  ukr_nopv.py     no P.V: no V conversion, no P.V products, no waits for them;
  ukr_nocopy.py   no copies in the loop: the ring's prologue copies only, every step reads the slots as they are;
  ukr_noexp.py    no exp2: P^T holds the scaled scores minus the base;
  ukr_novote.py   no vote: no warp vote, its store, or the rescale branch (the base then stays where it started, so
                  the per-column subtraction is hoisted out of the loop too);
  ukr_nolo.py     Q.K^T without q's second e4m3 tile (one FP8 product per step, not two);
  ukr_nowait.py   the loop's copies issued as in the library, never waited for (call 3): with ukr_nocopy, splits the
                  copies' cost into their issue and their wait;
  ukr_nomerge.py  no split merge after the kernel (call 3): the merge's share of the fixed cost;
  ukr_nobar.py    the barrier between the P^T (and vote) stores and P.V removed from the source: the compiler puts it
                  back (the same SASS), so it is not timed;
  ukr_noloop.py   no KV loop (call 4): the prologue (bounds, q and its e4m3 pair, the ring's first copies, waited
                  for after the loop), the epilogue and the merge: the fixed cost;
  ukr_noepi.py    no partial rows stored (call 4; their mask is false at run time, so nothing is optimized away);
  ukr_noq.py      q neither read nor split (call 4): zeros instead;
  ukr_nocopy_nopv.py, ukr_nocopy_novote.py, ukr_nocopy_nopv_novote.py, ukr_nocopy_nopv_novote_nolo.py,
  ukr_noloop_nomerge.py, ukr_noloop_noepi.py, ukr_noloop_noq.py, ukr_noloop_noepi_nomerge_noq.py: those knock-outs
                  together.
Usage: make_variants.py (from the repository root)"""
import sys
from pathlib import Path

sys.path.insert(0, "scripts")
from variant_source import absolute_imports, replaced  # noqa: E402

OUT = Path("build/v44")
KERNEL = Path("pagedattn/ops/unified_keys_rows.py")
WGMMA_KERNEL = Path("pagedattn/ops/verify_wgmma.py")
VW_Q_STORE = "        q_smem = gl.allocate_shared_memory(MMA_DTYPE, [BLOCK_M, D], Q_SMEM, q)\n"
VW_FILL = """    _fill_ring(k_ptr, v_ptr, k_ring, v_ring, usable_smem, table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks,
               k_head, v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
               SAME_STRIDES, COPY)
    # the first loop step's two tiles' pages, used with PAGES_AHEAD (each step then reads the next step's)
    phys, ok = _tile_pages(table_row, tile_lo + STAGES - 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages_a = gl.where(ok, phys, -1)
    phys, ok = _tile_pages(table_row, tile_lo + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages_b = gl.where(ok, phys, -1)
"""
VW_FILL_FIRST = """    gl.static_assert(STAGES == 4)
    phys0, ok0 = _tile_pages(table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    phys1, ok1 = _tile_pages(table_row, tile_lo + 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    phys2, ok2 = _tile_pages(table_row, tile_lo + 2, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    phys, ok = _tile_pages(table_row, tile_lo + 3, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages_a = gl.where(ok, phys, -1)
    phys, ok = _tile_pages(table_row, tile_lo + 4, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages_b = gl.where(ok, phys, -1)
    gl.thread_barrier()  # every table load above issued before the first copy (ptxas keeps them there)
    _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, phys0, ok0, tile_lo, k_head, v_head, stride_k_block,
                stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES, SAME_STRIDES, COPY)
    _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, phys1, ok1, tile_lo + 1, k_head, v_head, stride_k_block,
                stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES, SAME_STRIDES, COPY)
    _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, phys2, ok2, tile_lo + 2, k_head, v_head, stride_k_block,
                stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES, SAME_STRIDES, COPY)
    if not KV_FP8:
        q_smem.store(q)
"""

CHUNK_LOOP = """        for c in gl.static_range(TILE_N // CHUNK):
            v_even, v_odd = fp8_pairs_to_fp16(raw)
            o_even = warpgroup_mma(v_even, p_smem.slice(c * CHUNK, CHUNK, dim=0), o_even, is_async=True)
            o_odd = warpgroup_mma(v_odd, p_smem.slice(c * CHUNK, CHUNK, dim=0), o_odd, is_async=True)
            if c + 1 < TILE_N // CHUNK:  # the next chunk's V is read while this one's products run
                raw = v_slot.slice((c + 1) * CHUNK, CHUNK, dim=0).permute([1, 0]).load(V_OP)
            o_even, o_odd = warpgroup_mma_wait(num_outstanding=0, deps=(o_even, o_odd))
"""
PIPELINED_LOOP = """        v_even, v_odd = fp8_pairs_to_fp16(raw)
        for c in gl.static_range(TILE_N // CHUNK):
            o_even = warpgroup_mma(v_even, p_smem.slice(c * CHUNK, CHUNK, dim=0), o_even, is_async=True)
            o_odd = warpgroup_mma(v_odd, p_smem.slice(c * CHUNK, CHUNK, dim=0), o_odd, is_async=True)
            if c + 1 < TILE_N // CHUNK:  # the next chunk's V read and converted while this one's products run
                raw = v_slot.slice((c + 1) * CHUNK, CHUNK, dim=0).permute([1, 0]).load(V_OP)
                v_even_next, v_odd_next = fp8_pairs_to_fp16(raw)
            o_even, o_odd = warpgroup_mma_wait(num_outstanding=0, deps=(o_even, o_odd))
            if c + 1 < TILE_N // CHUNK:
                v_even = v_even_next
                v_odd = v_odd_next
"""
LOOP_COPY = "        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, t + STAGES - 1, k_head, v_head,"
VOTE_STORE = "        votes_smem.store(warp_votes(gl.reshape(own, [32, WARPS]), RESCALE_SLACK))\n"
LO_PRODUCT = "        s = warpgroup_mma(k_tile, q_lo_smem.permute([1, 0]), s, is_async=True)\n"
Q_LOAD_TEXT = """    q = gl.load(q_ptr + q_rows[:, None] + gl.arange(0, D, layout=gl.SliceLayout(0, Q_LOAD))[None, :],
                mask=q_ok[:, None], other=0.0)
"""
P_BARRIER = "        gl.thread_barrier()  # every warp's P^T rows and vote\n"


KNOCKOUTS = {
    "nopv": [("for c in gl.static_range(TILE_N // CHUNK):", "for c in gl.static_range(0):")],
    "nocopy": [(LOOP_COPY, "        if False:\n    " + LOOP_COPY)],
    "noexp": [("        p = gl.exp2(growth)\n", "        p = growth\n")],
    "novote": [(VOTE_STORE, ""), ("if any_warp_voted(votes_smem):", "if False:")],
    "nolo": [(LO_PRODUCT, "")],
    "nowait": [("        async_copy.wait_group(STAGES - 2)\n", "")],
    "nomerge": [("        launch_merge(part, lse, out)\n", "        pass\n")],
    "noloop": [("    for t in range(tile_lo, tile_hi):", "    for t in range(tile_lo, tile_lo):")],
    "noepi": [("part_ptr + part_cols * D, col_ok)", "part_ptr + part_cols * D, col_ok & (kv_len < 0))")],
    "noq": [(Q_LOAD_TEXT, "    q = gl.zeros([HN, D], q_ptr.dtype.element_ty, Q_LOAD)\n")],
}
FIRST_STEP_PAGES = """    phys, ok = _tile_pages(table_row, tile_lo + STAGES - 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
"""
FILL_CALL = """    _fill_ring(k_ptr, v_ptr, k_ring, v_ring, usable_smem, table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks,
               k_head, v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
               SAME_STRIDES, COPY)
"""
BARRIER_FILL = """    gl.static_assert(STAGES == 2)
    phys0, ok0 = _tile_pages(table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    phys, ok = _tile_pages(table_row, tile_lo + 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    gl.thread_barrier()  # q's and both tiles' page-table loads issued before the first copies (ptxas keeps them there)
    _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, phys0, ok0, tile_lo, k_head, v_head, stride_k_block,
                stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES, SAME_STRIDES, COPY)
"""
KERNEL_START = "@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + [\"q_blocks\"])\ndef unified_keys_rows_kernel("
VOLATILE_PAGES = '''@gluon.jit
def _tile_pages_volatile(table_row, t, tile_hi, kv_len, max_blocks, num_blocks, TILE_N: gl.constexpr, PAGE: gl.constexpr,
                         COPY: gl.constexpr):
    offs = gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY))
    pos = t * TILE_N + offs
    page = t * (TILE_N // PAGE) + offs // PAGE
    in_range = pos < gl.minimum(gl.minimum(kv_len, tile_hi * TILE_N), max_blocks * PAGE)
    phys = gl.load(table_row + page, mask=in_range, other=-1, volatile=True)
    return phys, in_range & (phys.to(gl.uint32, bitcast=True) < num_blocks.to(gl.uint32, bitcast=True))


'''
FILL = "    _fill_ring(k_ptr, v_ptr, k_ring, v_ring, usable_smem, table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks,"
COMBINED = ("nocopy_nopv", "nocopy_novote", "nocopy_nopv_novote", "nocopy_nopv_novote_nolo", "noloop_nomerge",
            "noloop_noepi", "noloop_noq", "noloop_noepi_nomerge_noq")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    base = absolute_imports(KERNEL.read_text())
    forms = {
        "ukr_base": base,
        "ukr_pvpipe": replaced(base, (CHUNK_LOOP, PIPELINED_LOOP)),
        "ukr_chunk64": replaced(base, ("CHUNK = gl.constexpr(32)", "CHUNK = gl.constexpr(64)")),
        "ukr_nobar": replaced(base, (P_BARRIER, "")),
        "ukr_early": replaced(base, (FIRST_STEP_PAGES, ""), (FILL, FIRST_STEP_PAGES + FILL)),
        "ukr_qbar": replaced(base, (FIRST_STEP_PAGES, ""), (FILL_CALL, BARRIER_FILL)),
        "ukr_earlyv": replaced(base, (FIRST_STEP_PAGES, ""), (FILL, FIRST_STEP_PAGES.replace("_tile_pages(", "_tile_pages_volatile(") + FILL),
                               (KERNEL_START, VOLATILE_PAGES + KERNEL_START)),
    }
    for name in (*KNOCKOUTS, *COMBINED):
        forms[f"ukr_{name}"] = replaced(base, *[edit for part in name.split("_") for edit in KNOCKOUTS[part]])
    wgmma = absolute_imports(WGMMA_KERNEL.read_text())
    forms["vw_base"] = wgmma
    forms["vw_fill"] = replaced(wgmma, (VW_Q_STORE, VW_Q_STORE.replace(", q)", ")")), (VW_FILL, VW_FILL_FIRST))
    for name, text in forms.items():
        (OUT / f"{name}.py").write_text(text)

if __name__ == "__main__":
    main()
