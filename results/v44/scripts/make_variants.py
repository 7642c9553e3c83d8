"""v44: build the probe kernel files under build/v44 (ignored; run this from the repository root before the A/B
script, and carry build/v44 to the device). Each is a form of the library's ops/unified_keys_rows.py (the kernel that
runs FP8 MTP verify and both FP8 long requests) with its relative imports made absolute:
  ukr_base.py     the library's kernel as it is;
  ukr_pvpipe.py   P.V's next 32-key chunk of V read and converted while this chunk's two products run (the library
                  reads it then, and converts it only after the wait): a candidate, the same results;
  ukr_chunk64.py  P.V in 64-key chunks (two waits per 128-key step instead of four): a candidate, the same results;
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
    }
    for name in (*KNOCKOUTS, *COMBINED):
        forms[f"ukr_{name}"] = replaced(base, *[edit for part in name.split("_") for edit in KNOCKOUTS[part]])
    for name, text in forms.items():
        (OUT / f"{name}.py").write_text(text)

if __name__ == "__main__":
    main()
