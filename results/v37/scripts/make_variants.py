"""v37: build the probe kernel file build/v37/ukr_scores_ahead.py (ignored; run this from the repository root before
the A/B scripts, and carry build/v37 to the device): ops/unified_keys_rows.py (as in the tree) with its relative
imports made absolute and its KV loop reordered so that tile t's Q.K^T runs under tile t - 1's P.V (FA3's order
inside a warpgroup; perf-notes §6 item 1, v17's first lead, never measured on this kernel):
  * a step issues tile t's score wgmmas, then tile t - 1's P.V chunks (V converted in registers, as the library), then
    waits for the scores and runs tile t's softmax; the tensor cores multiply the scores while the warps convert V;
  * V of a tile is copied one step after its K: step t copies K(t + 1) and V(t) as one cp.async group into two-slot
    rings (K(t + 1) takes K(t - 1)'s slot, V(t) takes V(t - 2)'s), V's page ids carried from K's step;
  * P^T has two buffers: tile t's softmax writes one while the other (tile t - 1's) may still be read;
  * the segment's first tile's scores and softmax run before the loop and its last tile's P.V after it (guarded,
    for a single pass over an empty sequence); the softmax and P.V are the library's code, moved into helpers.
Shared memory at 64 packed rows and 128 keys: 183,552 + 16,384 B (P^T's second buffer) = 199,936 B.
Only 2-stage profiles (the launcher asserts it): the H200 table's keys-as-rows rows all are.
Each edit asserts that the text it replaces occurs once (`scripts/variant_source.replaced`).
build/v37/ukr_scores_ahead_chunks.py: the same with a P.V chunk's two products left running while the next chunk's V
is converted (wait for all but the last pair; the last chunk's waited for).
build/v37/ukr_addressing.py: the library with a tile's slots and page indices computed without t (vw_addressing.py,
ops/verify_wgmma.py's helpers so edited: 864 -> 840 loop instructions at 64 rows, 605 -> 558 at 16);
ukr_scores_ahead_chunks_addressing.py: both changes.
Call 2's, from the working tree (the addressing in the library): ukr_scores_first.py, a step's Q.K^T issued before the
next tile's copies and page-table read; vw_before.py and ukr_before.py, CALL1_TREE's ops/verify_wgmma.py and
ops/unified_keys_rows.py (both kernels before item 1).
Call 5's, from commit 17a3894 (item 1 in the library): vw_bounds.py and ukr_bounds.py, a tile's usable rows by one
compare per row against one bound, the page id's range by one unsigned compare; vw_now.py and ukr_now.py, that
commit's kernels unchanged.
Usage: make_variants.py (from the repository root)"""
import sys
from pathlib import Path
sys.path.insert(0, "scripts")
from variant_source import absolute_imports, git_show, replaced  # noqa: E402

OUT = Path("build/v37")
LIBRARY = "pagedattn/ops/unified_keys_rows.py"
CALL1_TREE = "d756c1a"  # call 1's probes are edits of this commit's files (v36's library)

HELPERS = '''

@gluon.jit
def _copy_rows(ptr, ring_slot, pages, t, head_off, stride_block, stride_slot, TILE_N: gl.constexpr, D: gl.constexpr,
               PAGE: gl.constexpr, COPY: gl.constexpr):
    """cp.async of tile t's rows of one cache (page ids `pages`, -1: not usable, zero-filled without a read) into
    `ring_slot`; the caller commits the group."""
    if TILE_N % PAGE == 0:  # tiles start on page boundaries: the slots do not depend on t
        slot = gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY)) % PAGE
    else:
        slot = (t * TILE_N + gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY))) % PAGE
    rows = pages.to(gl.int64) * stride_block + slot * stride_slot + head_off
    cols = gl.arange(0, D, layout=gl.SliceLayout(0, COPY))
    async_copy.async_copy_global_to_shared(ring_slot, ptr + rows[:, None] + cols[None, :], mask=(pages >= 0)[:, None])


@gluon.jit
def _step_copies(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages_k, pages_v, table_row, t, tile_hi, kv_len,
                 max_blocks, num_blocks, k_head, v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot,
                 TILE_N: gl.constexpr, D: gl.constexpr, PAGE: gl.constexpr, COPY: gl.constexpr):
    """Step t's copies, one group: K(t + 1) (pages_k) with its usable bytes, V(t) (pages_v). Returns the next
    step's (pages_k, pages_v): tile t + 2's entries, read now, and pages_k."""
    _copy_rows(k_ptr, k_ring.index((t + 1) % 2), pages_k, t + 1, k_head, stride_k_block, stride_k_slot, TILE_N, D, PAGE,
               COPY)
    usable_smem.index((t + 1) % 2).store((pages_k >= 0).to(gl.int8))
    _copy_rows(v_ptr, v_ring.index(t % 2), pages_v, t, v_head, stride_v_block, stride_v_slot, TILE_N, D, PAGE, COPY)
    async_copy.commit_group()
    phys, ok = _tile_pages(table_row, t + 2, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    return gl.where(ok, phys, -1), pages_k


@gluon.jit
def _scores(k_tile, q_hi_smem, q_lo_smem, TILE_N: gl.constexpr, HN: gl.constexpr, S_MMA: gl.constexpr):
    """S^T = K . Q^T of one tile (q's two e4m3 tiles), issued, not waited for."""
    s = warpgroup_mma(k_tile, q_hi_smem.permute([1, 0]), gl.zeros([TILE_N, HN], gl.float32, S_MMA), use_acc=False,
                      is_async=True)
    return warpgroup_mma(k_tile, q_lo_smem.permute([1, 0]), s, is_async=True)


@gluon.jit
def _softmax_tile(s, t, usable_slot, p_buf, votes_smem, o_even, o_odd, m_i, l_i, col_scale, q_pos, context,
                  TILE_N: gl.constexpr, WARPS: gl.constexpr, HN: gl.constexpr, KEYS: gl.constexpr,
                  O_MMA: gl.constexpr):
    """The library's softmax of tile t's scores s (waited for): P^T into p_buf, the warps' vote, the rare rescale
    of O^T and l (whose P.V products the caller has waited for), l's sums. Returns (m_i, l_i, o_even, o_odd)."""
    usable = usable_slot.load(KEYS) != 0
    pos = gl.where(usable, t * TILE_N + gl.arange(0, TILE_N, layout=KEYS), 2 ** 30)  # unusable keys lie past every query
    if t * TILE_N + TILE_N - 1 <= context:  # every key precedes the first query: one compare per key, not per score
        growth = gl.where(usable[:, None], gl.fma(s, col_scale[None, :], -m_i[None, :]), float("-inf"))
    else:
        growth = gl.where(pos[:, None] <= q_pos[None, :], gl.fma(s, col_scale[None, :], -m_i[None, :]),
                          float("-inf"))  # scaled s - base
    p = gl.exp2(growth)
    own = gl.reshape(growth, [WARPS, 2, 8, HN // 8, 4, 2])
    own = gl.permute(gl.max(gl.max(gl.max(own, axis=5), axis=3), axis=1), [1, 2, 0])  # [r, lane % 4, warp]
    votes_smem.store(warp_votes(gl.reshape(own, [32, WARPS]), RESCALE_SLACK))
    p_buf.store(p.to(gl.float16))
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
        p_buf.store(p.to(gl.float16))
        fence_async_shared()
        gl.thread_barrier()
    l_i = l_i + gl.sum(gl.reshape(p, [WARPS, 2, TILE_N // WARPS // 2, HN]), axis=1)
    return m_i, l_i, o_even, o_odd


@gluon.jit
def _pv_tile(v_slot, p_buf, o_even, o_odd, V_OP: gl.constexpr, TILE_N: gl.constexpr):
    """The library's O^T += V^T . P^T of one tile, CHUNK keys at a time; waits for every wgmma issued before it."""
    raw = v_slot.slice(0, CHUNK, dim=0).permute([1, 0]).load(V_OP)
    for c in gl.static_range(TILE_N // CHUNK):
        v_even, v_odd = fp8_pairs_to_fp16(raw)
        o_even = warpgroup_mma(v_even, p_buf.slice(c * CHUNK, CHUNK, dim=0), o_even, is_async=True)
        o_odd = warpgroup_mma(v_odd, p_buf.slice(c * CHUNK, CHUNK, dim=0), o_odd, is_async=True)
        if c + 1 < TILE_N // CHUNK:  # the next chunk's V is read while this one's products run
            raw = v_slot.slice((c + 1) * CHUNK, CHUNK, dim=0).permute([1, 0]).load(V_OP)
        o_even, o_odd = warpgroup_mma_wait(num_outstanding=0, deps=(o_even, o_odd))
    return o_even, o_odd


@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + ["q_blocks"])'''

RINGS_OLD = '''    k_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D],
                                       gl.NVMMASharedLayout.get_default_for([TILE_N, D], gl.float8e4nv))
    v_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D], gl.SwizzledSharedLayout(16, 1, 8, order=[1, 0]))
    v_pairs = v_ring._reinterpret(gl.int16, [STAGES, TILE_N, D // 2], gl.SwizzledSharedLayout(8, 1, 8, order=[1, 0]))
    usable_smem = gl.allocate_shared_memory(gl.int8, [STAGES, TILE_N], FLAT)
    p_smem = gl.allocate_shared_memory(gl.float16, [TILE_N, HN],
                                       gl.NVMMASharedLayout.get_default_for([TILE_N, HN], gl.float16))
'''
RINGS_NEW = '''    k_ring = gl.allocate_shared_memory(gl.float8e4nv, [2, TILE_N, D],
                                       gl.NVMMASharedLayout.get_default_for([TILE_N, D], gl.float8e4nv))
    v_ring = gl.allocate_shared_memory(gl.float8e4nv, [2, TILE_N, D], gl.SwizzledSharedLayout(16, 1, 8, order=[1, 0]))
    v_pairs = v_ring._reinterpret(gl.int16, [2, TILE_N, D // 2], gl.SwizzledSharedLayout(8, 1, 8, order=[1, 0]))
    usable_smem = gl.allocate_shared_memory(gl.int8, [2, TILE_N], FLAT)
    p_ring = gl.allocate_shared_memory(gl.float16, [2, TILE_N, HN],
                                       gl.NVMMASharedLayout.get_default_for([TILE_N, HN], gl.float16))
'''
FILL_OLD = '''    _fill_ring(k_ptr, v_ptr, k_ring, v_ring, usable_smem, table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks,
               k_head, v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
               SAME_STRIDES, COPY)
    # the first loop step's page-table entries; each step then reads the next step's (-1: not usable),
    # so the table load is not waited for between a tile's landing and its successor's copies
    phys, ok = _tile_pages(table_row, tile_lo + STAGES - 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages = gl.where(ok, phys, -1)
'''
FILL_NEW = '''    # K of the segment's first tile; each step then copies K(t + 1) and V(t), reading tile t + 2's entries
    phys, ok = _tile_pages(table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages_v = gl.where(ok, phys, -1)
    _copy_rows(k_ptr, k_ring.index(tile_lo % 2), pages_v, tile_lo, k_head, stride_k_block, stride_k_slot, TILE_N, D,
               PAGE, COPY)
    usable_smem.index(tile_lo % 2).store(ok.to(gl.int8))
    async_copy.commit_group()
    phys, ok = _tile_pages(table_row, tile_lo + 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages_k = gl.where(ok, phys, -1)
'''
LOOP_START = "    for t in range(tile_lo, tile_hi):\n"
LOOP_END = "    async_copy.wait_group(0)\n"
LOOP_NEW = '''    if tile_lo < tile_hi:  # (a single pass over an empty sequence has no tile)
        async_copy.wait_group(0)
        gl.thread_barrier()  # K(tile_lo) landed for every warp
        pages_k, pages_v = _step_copies(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages_k, pages_v, table_row, tile_lo,
                                        tile_hi, kv_len, max_blocks, num_blocks, k_head, v_head, stride_k_block,
                                        stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, COPY)
        fence_async_shared()
        s = _scores(k_ring.index(tile_lo % 2), q_hi_smem, q_lo_smem, TILE_N, HN, S_MMA)
        s = warpgroup_mma_wait(num_outstanding=0, deps=(s,))
        m_i, l_i, o_even, o_odd = _softmax_tile(s, tile_lo, usable_smem.index(tile_lo % 2), p_ring.index(tile_lo % 2),
                                                votes_smem, o_even, o_odd, m_i, l_i, col_scale, q_pos, context, TILE_N,
                                                WARPS, HN, KEYS, O_MMA)
        for t in range(tile_lo + 1, tile_hi):
            async_copy.wait_group(0)
            gl.thread_barrier()  # K(t), V(t - 1) landed for every warp; all are done with K(t - 1), V(t - 2), P^T(t - 2)
            pages_k, pages_v = _step_copies(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages_k, pages_v, table_row, t,
                                            tile_hi, kv_len, max_blocks, num_blocks, k_head, v_head, stride_k_block,
                                            stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, COPY)
            fence_async_shared()
            s = _scores(k_ring.index(t % 2), q_hi_smem, q_lo_smem, TILE_N, HN, S_MMA)  # runs under tile t - 1's P.V
            o_even, o_odd = _pv_tile(v_pairs.index((t - 1) % 2), p_ring.index((t - 1) % 2), o_even, o_odd, V_OP, TILE_N)
            s = warpgroup_mma_wait(num_outstanding=0, deps=(s,))
            m_i, l_i, o_even, o_odd = _softmax_tile(s, t, usable_smem.index(t % 2), p_ring.index(t % 2), votes_smem,
                                                    o_even, o_odd, m_i, l_i, col_scale, q_pos, context, TILE_N, WARPS,
                                                    HN, KEYS, O_MMA)
        async_copy.wait_group(0)
        gl.thread_barrier()  # V(tile_hi - 1) landed for every warp
        o_even, o_odd = _pv_tile(v_pairs.index((tile_hi - 1) % 2), p_ring.index((tile_hi - 1) % 2), o_even, o_odd, V_OP,
                                 TILE_N)
    async_copy.wait_group(0)
'''
ASSERT_OLD = '''    splits = profile.num_splits
    if num_tokens == 0:'''
ASSERT_NEW = '''    splits = profile.num_splits
    assert profile.num_stages == 2, "the scores-ahead probe has two-slot rings"
    if num_tokens == 0:'''

# ukr_scores_ahead_chunks.py: a P.V chunk's products may still run while the next chunk's V is converted (one pair in
# flight, the last chunk's waited for)
CHUNK_WAIT_OLD = """        o_even, o_odd = warpgroup_mma_wait(num_outstanding=0, deps=(o_even, o_odd))
    return o_even, o_odd"""
CHUNK_WAIT_NEW = """        o_even, o_odd = warpgroup_mma_wait(num_outstanding=2 if c + 1 < TILE_N // CHUNK else 0, deps=(o_even, o_odd))
    return o_even, o_odd"""

# build/v37/vw_addressing.py: ops/verify_wgmma.py with a tile's slots and page indices computed without t where tiles
# start on page boundaries (the compiler cannot drop t from (t * TILE_N + i) % PAGE and // PAGE, signed t);
# ukr_addressing.py (the library) and ukr_scores_ahead_chunks_addressing.py import its helpers
HELPERS_LIBRARY = "pagedattn/ops/verify_wgmma.py"
HELPERS_IMPORT = "from pagedattn.ops.verify_wgmma import ("
HELPERS_IMPORT_NEW = "from vw_addressing import ("
SLOT_OLD = """    slot = (t * TILE_N + gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY))) % PAGE
    phys = phys.to(gl.int64)"""
SLOT_NEW = """    if TILE_N % PAGE == 0:
        slot = gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY)) % PAGE
    else:
        slot = (t * TILE_N + gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY))) % PAGE
    phys = phys.to(gl.int64)"""
PAGE_OLD = """    pos = t * TILE_N + gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY))
    return _pages(table_row, pos, (pos < kv_len) & (t < tile_hi), max_blocks, num_blocks, PAGE)"""
PAGE_NEW = """    offs = gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY))
    pos = t * TILE_N + offs
    in_range = (pos < kv_len) & (t < tile_hi)
    if TILE_N % PAGE == 0:
        page = t * (TILE_N // PAGE) + offs // PAGE
    else:
        page = pos // PAGE
    phys = gl.load(table_row + page, mask=in_range & (page < max_blocks), other=-1)
    return phys, in_range & (phys >= 0) & (phys < num_blocks)"""

# call 2, from the working tree (item 1 in the library): build/v37/ukr_scores_first.py issues a step's Q.K^T right
# after the barrier and the fence, and the next tile's copies and page-table read after it, under the products;
# build/v37/vw_before.py is CALL1_TREE's ops/verify_wgmma.py, whose kernel the BF16 MTP A/B times as it was
SCORES_FIRST_OLD = """        gl.thread_barrier()  # tile t landed for every warp; all are done with tile t - 1's slot and P^T
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, t + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
        phys, ok = _tile_pages(table_row, t + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        pages = gl.where(ok, phys, -1)
        fence_async_shared()
        k_tile = k_ring.index(t % STAGES)
        s = warpgroup_mma(k_tile, q_hi_smem.permute([1, 0]), gl.zeros([TILE_N, HN], gl.float32, S_MMA),
                          use_acc=False, is_async=True)
        s = warpgroup_mma(k_tile, q_lo_smem.permute([1, 0]), s, is_async=True)
"""
SCORES_FIRST_NEW = """        gl.thread_barrier()  # tile t landed for every warp; all are done with tile t - 1's slot and P^T
        fence_async_shared()
        k_tile = k_ring.index(t % STAGES)
        s = warpgroup_mma(k_tile, q_hi_smem.permute([1, 0]), gl.zeros([TILE_N, HN], gl.float32, S_MMA),
                          use_acc=False, is_async=True)
        s = warpgroup_mma(k_tile, q_lo_smem.permute([1, 0]), s, is_async=True)
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, t + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
        phys, ok = _tile_pages(table_row, t + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        pages = gl.where(ok, phys, -1)
"""

# call 5: vw_bounds.py, 17a3894's ops/verify_wgmma.py with a tile's usable rows tested by one compare per row against
# the least of the sequence's length, the segment's end and the table's width (scalars, hoisted out of the loop) and
# the page id's range by one unsigned compare; ukr_bounds.py imports it
CALL5_TREE = "17a3894"
BOUNDS_OLD = """    return _table_entries(table_row, page, (pos < kv_len) & (t < tile_hi), max_blocks, num_blocks)"""
BOUNDS_NEW = """    end = gl.minimum(gl.minimum(kv_len, tile_hi * TILE_N), max_blocks * PAGE)  # keys past it are not usable
    in_range = pos < end
    phys = gl.load(table_row + page, mask=in_range, other=-1)
    return phys, in_range & (phys.to(gl.uint32, bitcast=True) < num_blocks.to(gl.uint32, bitcast=True))"""

# ukr_bounds_early.py (not run; offline SASS only, perf-notes v37 item 4): ukr_bounds.py with the next step's page-table
# entries read before this step's copies are issued, in the source as the library's build issues them in SASS
EARLY_OLD = """        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, t + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
        phys, ok = _tile_pages(table_row, t + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        pages = gl.where(ok, phys, -1)
"""
EARLY_NEW = """        phys, ok = _tile_pages(table_row, t + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, t + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
        pages = gl.where(ok, phys, -1)
"""


def cut_loop(text: str) -> str:
    """The library's KV loop (from its `for` to the wait after it) replaced by LOOP_NEW."""
    assert text.count(LOOP_START) == 1 and text.count(LOOP_END) == 1
    start = text.index(LOOP_START)
    end = text.index(LOOP_END) + len(LOOP_END)
    return text[:start] + LOOP_NEW + text[end:]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    text = absolute_imports(git_show(f"{CALL1_TREE}:{LIBRARY}"))
    text = replaced(text, ('\n\n@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + ["q_blocks"])', HELPERS),
                    (RINGS_OLD, RINGS_NEW), (FILL_OLD, FILL_NEW), (ASSERT_OLD, ASSERT_NEW))
    (OUT / "ukr_scores_ahead.py").write_text(cut_loop(text))
    chunks = replaced(cut_loop(text), (CHUNK_WAIT_OLD, CHUNK_WAIT_NEW))
    (OUT / "ukr_scores_ahead_chunks.py").write_text(chunks)
    helpers = absolute_imports(git_show(f"{CALL1_TREE}:{HELPERS_LIBRARY}"))
    (OUT / "vw_addressing.py").write_text(replaced(helpers, (SLOT_OLD, SLOT_NEW), (PAGE_OLD, PAGE_NEW)))
    (OUT / "vw_before.py").write_text(helpers)
    library = absolute_imports(git_show(f"{CALL1_TREE}:{LIBRARY}"))
    (OUT / "ukr_before.py").write_text(replaced(library, (HELPERS_IMPORT, "from vw_before import (")))
    (OUT / "ukr_addressing.py").write_text(replaced(library, (HELPERS_IMPORT, HELPERS_IMPORT_NEW)))
    (OUT / "ukr_scores_ahead_chunks_addressing.py").write_text(replaced(chunks, (HELPERS_IMPORT, HELPERS_IMPORT_NEW)))
    (OUT / "ukr_scores_first.py").write_text(replaced(absolute_imports(Path(LIBRARY).read_text()),
                                                      (SCORES_FIRST_OLD, SCORES_FIRST_NEW)))


def call5() -> None:
    """Call 5's probes, from the tree of commit 17a3894 (item 1 in the library): vw_bounds.py / ukr_bounds.py, and
    vw_now.py / ukr_now.py, that tree's kernels as they are."""
    helpers = absolute_imports(git_show(f"{CALL5_TREE}:{HELPERS_LIBRARY}"))
    library = absolute_imports(git_show(f"{CALL5_TREE}:{LIBRARY}"))
    (OUT / "vw_now.py").write_text(helpers)
    (OUT / "ukr_now.py").write_text(replaced(library, (HELPERS_IMPORT, "from vw_now import (")))
    (OUT / "vw_bounds.py").write_text(replaced(helpers, (BOUNDS_OLD, BOUNDS_NEW)))
    (OUT / "ukr_bounds.py").write_text(replaced(library, (HELPERS_IMPORT, "from vw_bounds import (")))
    (OUT / "ukr_bounds_early.py").write_text(replaced(library, (HELPERS_IMPORT, "from vw_bounds import ("),
                                                      (EARLY_OLD, EARLY_NEW)))


if __name__ == "__main__":
    main()
    call5()
