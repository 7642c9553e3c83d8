"""v34: build the probe kernel files (ignored; run this from the repository root before the A/B scripts, and carry
build/v34 to the device), each ops/unified_keys_rows.py (as in the tree) with its relative imports made absolute.
build/v34/ukr_late_v.py (call 1, late_v_ab.py): each tile's K and V copied in two cp.async groups, so that a loop step waits for its K
before Q.K^T and for its V only before the P^T barrier (perf-notes v34 item 1):
  * the copies of a step go out as two groups, K (with the usable-key bytes) then V; the prologue issues the same
    pairs for the ring's first tiles (an empty group where a pair has no V yet);
  * step t waits with 2 KS - 3 groups in flight for K(t), then, before the P^T barrier, with 2 STAGES - 2 for V(t):
    V(t)'s copy runs under Q.K^T and the softmax instead of being waited for at the step's start; V's first chunk
    is read from shared memory after that barrier (the library reads it under Q.K^T);
  * EXTRA_K (launcher: extra_k) makes K's ring that many tiles deeper than V's (KS = STAGES + EXTRA_K): K of tile
    t + KS - 1 and V of tile t + STAGES - 1 are copied at step t, V's page ids carried from the step before.
Each edit asserts that the text it replaces occurs once (`scripts/variant_source.replaced`).
Usage: make_variants.py (from the repository root)"""
import sys
from pathlib import Path
sys.path.insert(0, "scripts")
from variant_source import absolute_imports, replaced  # noqa: E402

OUT = Path("build/v34")

HELPER = '''

@gluon.jit
def _rows(pages, t, head_off, stride_block, stride_slot, TILE_N: gl.constexpr, PAGE: gl.constexpr, COPY: gl.constexpr):
    """Offsets of tile t's rows in one cache (page ids `pages`)."""
    slot = (t * TILE_N + gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY))) % PAGE
    return pages.to(gl.int64) * stride_block + slot * stride_slot + head_off


@gluon.jit
def _issue_rows(ptr, ring, rows, ok, t, D: gl.constexpr, DEPTH: gl.constexpr, COPY: gl.constexpr):
    """cp.async of tile t's rows of one cache (offsets `rows`; rows not `ok` are zero-filled without a read)
    into ring slot t % DEPTH, as a group of its own."""
    cols = gl.arange(0, D, layout=gl.SliceLayout(0, COPY))
    async_copy.async_copy_global_to_shared(ring.index(t % DEPTH), ptr + rows[:, None] + cols[None, :], mask=ok[:, None])
    async_copy.commit_group()


@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + ["q_blocks"])'''

FILL_OLD = '''    _fill_ring(k_ptr, v_ptr, k_ring, v_ring, usable_smem, table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks,
               k_head, v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
               SAME_STRIDES, COPY)
    # the first loop step's page-table entries; each step then reads the next step's (-1: not usable),
    # so the table load is not waited for between a tile's landing and its successor's copies
    phys, ok = _tile_pages(table_row, tile_lo + STAGES - 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages = gl.where(ok, phys, -1)
'''
FILL_NEW = '''    for j in gl.static_range(KS - 1):  # the pairs of the steps before the first: K(j), V(j - EXTRA_K)
        phys, ok = _tile_pages(table_row, tile_lo + j, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        _issue_rows(k_ptr, k_ring, _rows(phys, tile_lo + j, k_head, stride_k_block, stride_k_slot, TILE_N, PAGE, COPY),
                    ok, tile_lo + j, D, KS, COPY)
        usable_smem.index((tile_lo + j) % KS).store(ok.to(gl.int8))
        if j >= EXTRA_K:
            phys, ok = _tile_pages(table_row, tile_lo + j - EXTRA_K, tile_hi, kv_len, max_blocks, num_blocks, TILE_N,
                                   PAGE, COPY)
            _issue_rows(v_ptr, v_ring, _rows(phys, tile_lo + j - EXTRA_K, v_head, stride_v_block, stride_v_slot, TILE_N,
                                              PAGE, COPY), ok, tile_lo + j - EXTRA_K, D, STAGES, COPY)
        else:
            async_copy.commit_group()  # no V yet: keeps the groups alternating K, V
    phys, ok = _tile_pages(table_row, tile_lo + STAGES - 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages_v = gl.where(ok, phys, -1)  # V's pages for the first step
    phys, ok = _tile_pages(table_row, tile_lo + KS - 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages = gl.where(ok, phys, -1)  # K's
'''
LOOP_OLD = '''        async_copy.wait_group(STAGES - 2)
        gl.thread_barrier()  # tile t landed for every warp; all are done with tile t - 1's slot and P^T
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, t + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
        phys, ok = _tile_pages(table_row, t + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        pages = gl.where(ok, phys, -1)
        fence_async_shared()
        k_tile = k_ring.index(t % STAGES)
'''
LOOP_NEW = '''        async_copy.wait_group(2 * KS - 3)
        gl.thread_barrier()  # K(t) landed for every warp; all are done with step t - 1's slots and P^T
        k_rows = _rows(pages, t + KS - 1, k_head, stride_k_block, stride_k_slot, TILE_N, PAGE, COPY)
        _issue_rows(k_ptr, k_ring, k_rows, pages >= 0, t + KS - 1, D, KS, COPY)
        usable_smem.index((t + KS - 1) % KS).store((pages >= 0).to(gl.int8))
        if EXTRA_K == 0 and SAME_STRIDES:  # one offset per key for both caches, as the library's copies
            v_rows = k_rows
        else:
            v_rows = _rows(pages_v, t + STAGES - 1, v_head, stride_v_block, stride_v_slot, TILE_N, PAGE, COPY)
        _issue_rows(v_ptr, v_ring, v_rows, pages_v >= 0, t + STAGES - 1, D, STAGES, COPY)
        phys, ok = _tile_pages(table_row, t + KS, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        if EXTRA_K > 0:
            pages_v = pages
        pages = gl.where(ok, phys, -1)
        if EXTRA_K == 0:
            pages_v = pages
        fence_async_shared()
        k_tile = k_ring.index(t % KS)
'''


DEALT_HELPERS = '''

@gluon.jit
def _early_pages(table_row, t, max_blocks, TILE_N: gl.constexpr, PAGE: gl.constexpr, COPY: gl.constexpr):
    """Tile t's page-table entries, read before the sequence's length is known: masked by the table's width
    only (volatile: kept before the kernel's exits)."""
    page = (t * TILE_N + gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY))) // PAGE
    return gl.load(table_row + page, mask=page < max_blocks, other=-1, volatile=True)


@gluon.jit
def _usable_pages(phys, t, kv_len, num_blocks, TILE_N: gl.constexpr, COPY: gl.constexpr):
    """`_early_pages`' entries of tile t with -1 where a key is past the sequence or its page id out of range."""
    pos = t * TILE_N + gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY))
    return gl.where((pos < kv_len) & (phys >= 0) & (phys < num_blocks), phys, -1)


@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + ["q_blocks"])'''

DEALT_HEAD_OLD = '''    kv_head = gl.program_id(1)
    split = gl.program_id(2)
    COPY: gl.constexpr = gl.BlockedLayout([1, 16], [32 * 16 // D, D // 16], [WARPS, 1], [1, 0])
'''
DEALT_HEAD_NEW = '''    kv_head = gl.program_id(1)
    split = gl.program_id(2)
    COPY: gl.constexpr = gl.BlockedLayout([1, 16], [32 * 16 // D, D // 16], [WARPS, 1], [1, 0])
    gl.static_assert(TILE_N % PAGE == 0)  # a key's offset in its page does not depend on its tile
    table_row = table_ptr + seq.to(gl.int64) * stride_table
    first_raw = _early_pages(table_row, split, max_blocks, TILE_N, PAGE, COPY)  # the ring's first copy
    ahead_raw = _early_pages(table_row, split + (STAGES - 1) * num_splits, max_blocks, TILE_N, PAGE, COPY)
'''
DEALT_FILL_OLD = '''    table_row = table_ptr + seq.to(gl.int64) * stride_table
    k_head = kv_head * stride_k_head
    v_head = kv_head * stride_v_head
''' + FILL_OLD  # the library's ring fill, after its table row and heads
DEALT_FILL_NEW = '''    k_head = kv_head * stride_k_head
    v_head = kv_head * stride_v_head
    first = _usable_pages(first_raw, split, kv_len, num_blocks, TILE_N, COPY)
    _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, first, first >= 0, 0, k_head, v_head, stride_k_block,
                stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES, SAME_STRIDES, COPY)
    for ahead in gl.static_range(1, STAGES - 1):
        phys, ok = _tile_pages(table_row, split + ahead * num_splits, num_tiles, kv_len, max_blocks, num_blocks, TILE_N,
                               PAGE, COPY)
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, phys, ok, ahead, k_head, v_head, stride_k_block,
                    stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES, SAME_STRIDES, COPY)
    pages = _usable_pages(ahead_raw, split + (STAGES - 1) * num_splits, kv_len, num_blocks, TILE_N, COPY)
'''
DEALT_LOOP_OLD = '''    for t in range(tile_lo, tile_hi):
''' + LOOP_OLD  # the library's loop head
DEALT_LOOP_NEW = '''    step = 0
    for t in range(split, num_tiles, num_splits):
        async_copy.wait_group(STAGES - 2)
        gl.thread_barrier()  # the step's tile landed for every warp; all are done with the last step's slot and P^T
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, step + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
        phys, ok = _tile_pages(table_row, t + STAGES * num_splits, num_tiles, kv_len, max_blocks, num_blocks, TILE_N,
                               PAGE, COPY)
        pages = gl.where(ok, phys, -1)
        fence_async_shared()
        k_tile = k_ring.index(step % STAGES)
'''


def dealt(lib):
    return replaced(
        lib,
        ('"""Decode and verify attention', '"""v34 probe (build/v34/ukr_dealt.py, make_variants.py): decode and verify attention'),
        ("\n\n@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + [\"q_blocks\"])", DEALT_HELPERS),
        (DEALT_HEAD_OLD, DEALT_HEAD_NEW),
        ("    tile_lo, tile_hi = _segment_tiles(kv_len, split, num_splits, TILE_N)\n",
         "    num_tiles = gl.cdiv(kv_len, TILE_N)\n"),
        ("        if tile_lo >= tile_hi:  # segment starts past this sequence's keys\n",
         "        if split >= num_tiles:  # no tile for this split\n"),
        (DEALT_FILL_OLD, DEALT_FILL_NEW), (DEALT_LOOP_OLD, DEALT_LOOP_NEW),
        ("        v_slot = v_pairs.index(t % STAGES)\n", "        v_slot = v_pairs.index(step % STAGES)\n"),
        ("        usable = usable_smem.index(t % STAGES).load(KEYS) != 0\n",
         "        usable = usable_smem.index(step % STAGES).load(KEYS) != 0\n"),
        ("            o_even, o_odd = warpgroup_mma_wait(num_outstanding=0, deps=(o_even, o_odd))\n    async_copy.wait_group(0)\n",
         "            o_even, o_odd = warpgroup_mma_wait(num_outstanding=0, deps=(o_even, o_odd))\n        step += 1\n"
         "    async_copy.wait_group(0)\n"),
    )


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    lib = absolute_imports(Path("pagedattn/ops/unified_keys_rows.py").read_text())
    (OUT / "ukr_dealt.py").write_text(dealt(lib))
    text = replaced(
        lib,
        ('"""Decode and verify attention', '"""v34 probe (build/v34/ukr_late_v.py, make_variants.py): decode and verify attention'),
        ("\n\n@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + [\"q_blocks\"])", HELPER),
        ("    K_SCALE_TENSOR: gl.constexpr, V_SCALE_TENSOR: gl.constexpr, MULTI_BLOCK: gl.constexpr,\n):\n",
         "    K_SCALE_TENSOR: gl.constexpr, V_SCALE_TENSOR: gl.constexpr, MULTI_BLOCK: gl.constexpr,\n"
         "    EXTRA_K: gl.constexpr,\n):\n    KS: gl.constexpr = STAGES + EXTRA_K  # K's ring depth\n"),
        ("    k_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D],",
         "    k_ring = gl.allocate_shared_memory(gl.float8e4nv, [KS, TILE_N, D],"),
        ("    usable_smem = gl.allocate_shared_memory(gl.int8, [STAGES, TILE_N], FLAT)",
         "    usable_smem = gl.allocate_shared_memory(gl.int8, [KS, TILE_N], FLAT)"),
        (FILL_OLD, FILL_NEW), (LOOP_OLD, LOOP_NEW),
        ("        raw = v_slot.slice(0, CHUNK, dim=0).permute([1, 0]).load(V_OP)\n        usable = usable_smem.index(t % STAGES)",
         "        usable = usable_smem.index(t % KS)"),
        ('''        p_smem.store(p.to(gl.float16))
        fence_async_shared()
        gl.thread_barrier()  # every warp's P^T rows and vote
''', '''        async_copy.wait_group(2 * STAGES - 2)  # V(t)
        p_smem.store(p.to(gl.float16))
        fence_async_shared()
        gl.thread_barrier()  # every warp's P^T rows and vote; V(t) landed for every warp
'''),
        ("        l_i = l_i + gl.sum(gl.reshape(p, [WARPS, 2, TILE_N // WARPS // 2, HN]), axis=1)\n",
         "        raw = v_slot.slice(0, CHUNK, dim=0).permute([1, 0]).load(V_OP)\n"
         "        l_i = l_i + gl.sum(gl.reshape(p, [WARPS, 2, TILE_N // WARPS // 2, HN]), axis=1)\n"),
        ("                             softmax_scale: float, k_scale=None, v_scale=None, profile: LaunchProfile) -> None:",
         "                             softmax_scale: float, k_scale=None, v_scale=None, profile: LaunchProfile,\n"
         "                             extra_k: int = 0) -> None:"),
        ("        MULTI_BLOCK=q_blocks > 1, num_warps=profile.num_warps,\n",
         "        MULTI_BLOCK=q_blocks > 1, EXTRA_K=extra_k, num_warps=profile.num_warps,\n"),
    )
    (OUT / "ukr_late_v.py").write_text(text)


if __name__ == "__main__":
    main()
