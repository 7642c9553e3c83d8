"""v32: build the probe kernel file build/v32/ukr_claim.py (ignored; run this from the repository root before
claim_ab.py, and carry build/v32 to the device): ops/unified_keys_rows.py (as in the tree) with its relative
imports made absolute and the KV tiles of each (query block, KV head) handed out as the programs ask for them
instead of cut into equal runs beforehand (perf-notes v32 item 1):
  * steps 0 .. STAGES (the ring's prologue, and the steps whose page-table entries are read before any claim could
    have returned) are dealt: split s takes tile s + step x splits;
  * every later step's tile is claimed from a per-(query block, KV head) counter: at step j (after the ring's
    barrier) thread 0 adds 1 to the counter (relaxed, its result not waited for), and before the P^T barrier
    stores the claimed tile (dealt tiles + the counter's old value, or none once the pool is empty) to shared
    memory, which every thread reads after that barrier into its register copy of the next R steps' tiles: the
    tile of step j + STAGES + 1;
  * a program claims while its step j + STAGES has a tile, so each program that claims makes exactly one failing
    claim; the claim is PTX atom.inc bounded by the call's last counter value, so the last claim leaves the
    persistent zeroed counter buffer at zero for the next call (CUDA graphs need no reset node);
  * the ring slots and the keys' page offsets follow the step, not the tile (TILE_N % PAGE == 0, so a key's
    offset in its page does not depend on the tile).
Each edit asserts that the text it replaces occurs once (`scripts/variant_source.replaced`).
Usage: make_variants.py (from the repository root)"""
import sys
from pathlib import Path
sys.path.insert(0, "scripts")
from variant_source import absolute_imports, replaced  # noqa: E402

OUT = Path("build/v32")

HELPERS = '''

@gluon.jit
def _step_tile(ring, step, split, num_splits, num_tiles, FIRST: gl.constexpr):
    """The tile of loop step `step`: dealt (split + step x splits, or num_tiles: none) for the first FIRST
    steps, else the one claimed for it, from `ring` (every thread's copy of the claimed tiles, slot step % R)."""
    R: gl.constexpr = ring.shape[0]
    claimed = gl.max(gl.where(gl.arange(0, R, layout=ring.type.layout) == step % R, ring, -1), axis=0)
    return gl.where(step < FIRST, gl.minimum(split + step * num_splits, num_tiles), claimed)


@gluon.jit
def _claim(counter_ptr, claiming, last_claim, WARPS: gl.constexpr):
    """Thread 0 claims a tile if `claiming`: PTX atom.inc on the counter (relaxed; its old value, and the counter
    goes back to 0 after the call's last claim, last_claim), through inline PTX: ptxas aggregates an atomic add
    over the warp with a shuffle of its result right after it, which waits for the round trip. [32, WARPS],
    element (lane, warp) in its thread; every element but thread 0's, and thread 0's when not claiming,
    is 2^31 - 1 (no tile)."""
    EACH: gl.constexpr = gl.BlockedLayout([1, 1], [32, 1], [1, WARPS], [0, 1])
    lane = gl.arange(0, 32, layout=gl.SliceLayout(1, EACH))[:, None]
    warp = gl.arange(0, WARPS, layout=gl.SliceLayout(0, EACH))[None, :]
    first = ((lane + warp == 0) & claiming).to(gl.int32)
    zeros = gl.zeros([32, WARPS], gl.int32, EACH)
    return gl.inline_asm_elementwise(
        "{ .reg .pred p; setp.ne.b32 p, $1, 0; mov.b32 $0, 2147483647; @p atom.relaxed.gpu.global.inc.u32 $0, [$2], $3; }",
        "=r,r,l,r", [first, counter_ptr + zeros, zeros + last_claim], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def _publish_claim(claim_smem, claim, pool_first, pool, num_tiles):
    """The claimed tile (num_tiles: none) into claim_smem; thread 0 waits here for its atomic's result."""
    claim_smem.store(gl.where(claim < pool, pool_first + claim, num_tiles))


@gluon.jit
def _claimed_tile(claim_smem):
    """Thread 0's published tile, the same in every thread (after the barrier that follows `_publish_claim`)."""
    WARPS: gl.constexpr = claim_smem.shape[1]
    EVERY: gl.constexpr = gl.BlockedLayout([WARPS], [32], [WARPS], [0])
    lane0 = claim_smem._reinterpret(gl.int32, [32, WARPS], gl.SwizzledSharedLayout(1, 1, 1, order=[0])).index(0)
    return gl.max(gl.where(gl.arange(0, WARPS, layout=EVERY) == 0, lane0.load(EVERY), -1), axis=0)


@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + ["q_blocks"])'''

LAUNCHER = '''
_COUNTERS = {}


def _counters(device, n):
    """A persistent zeroed int32 buffer of at least n counters on `device` (the kernel leaves it at 0)."""
    buf = _COUNTERS.get(device)
    if buf is None or buf.numel() < n:
        buf = _COUNTERS[device] = torch.zeros(max(n, 4096), dtype=torch.int32, device=device)
    return buf


def launch_unified_keys_rows('''

SETUP_OLD = '''    tile_lo, tile_hi = _segment_tiles(kv_len, split, num_splits, TILE_N)
'''
SETUP_NEW = '''    gl.static_assert(TILE_N % PAGE == 0)  # a key's offset in its page does not depend on its tile
    num_tiles = gl.cdiv(kv_len, TILE_N)
    FIRST: gl.constexpr = STAGES + 1  # dealt steps
    R: gl.constexpr = 4 if FIRST <= 4 else 8  # ring rows of step tiles (>= FIRST)
    pool_first = FIRST * num_splits
    pool = gl.maximum(num_tiles - pool_first, 0)
    # claims: one per tile of the pool, and one failing claim per program whose step STAGES has a tile
    last_claim = pool + gl.minimum(gl.maximum(num_tiles - STAGES * num_splits, 0), num_splits) - 1
    counter = counter_ptr + gl.program_id(0) * gl.num_programs(1) + kv_head
'''
EXIT_OLD = "        if tile_lo >= tile_hi:  # segment starts past this sequence's keys\n"
EXIT_NEW = "        if split >= num_tiles:  # no tile for this split\n"
FILL_OLD = '''    _fill_ring(k_ptr, v_ptr, k_ring, v_ring, usable_smem, table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks,
               k_head, v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
               SAME_STRIDES, COPY)
    # the first loop step's page-table entries; each step then reads the next step's (-1: not usable),
    # so the table load is not waited for between a tile's landing and its successor's copies
    phys, ok = _tile_pages(table_row, tile_lo + STAGES - 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
'''
FILL_NEW = '''    claim_smem = gl.allocate_shared_memory(gl.int32, [32, WARPS], gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0]))
    RING: gl.constexpr = gl.BlockedLayout([R], [32], [WARPS], [0])  # every thread: the claimed tiles of R steps
    ring = gl.zeros([R], gl.int32, RING)
    for dealt in gl.static_range(STAGES - 1):
        phys, ok = _tile_pages(table_row, gl.minimum(split + dealt * num_splits, num_tiles), num_tiles, kv_len,
                               max_blocks, num_blocks, TILE_N, PAGE, COPY)
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, phys, ok, dealt, k_head, v_head, stride_k_block,
                    stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES, SAME_STRIDES, COPY)
    phys, ok = _tile_pages(table_row, gl.minimum(split + (STAGES - 1) * num_splits, num_tiles), num_tiles, kv_len,
                           max_blocks, num_blocks, TILE_N, PAGE, COPY)
'''
LOOP_OLD = '''    for t in range(tile_lo, tile_hi):
        async_copy.wait_group(STAGES - 2)
        gl.thread_barrier()  # tile t landed for every warp; all are done with tile t - 1's slot and P^T
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, t + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
        phys, ok = _tile_pages(table_row, t + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        pages = gl.where(ok, phys, -1)
        fence_async_shared()
        k_tile = k_ring.index(t % STAGES)
'''
LOOP_NEW = '''    t = split
    step = 0
    while t < num_tiles:
        async_copy.wait_group(STAGES - 2)
        gl.thread_barrier()  # step's tile landed for every warp; all are done with the last step's slot and P^T
        ahead = _step_tile(ring, step + STAGES, split, num_splits, num_tiles, FIRST)
        claim = _claim(counter, ahead < num_tiles, last_claim, WARPS)  # step + FIRST's tile
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, step + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
        phys, ok = _tile_pages(table_row, ahead, num_tiles, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        pages = gl.where(ok, phys, -1)
        fence_async_shared()
        k_tile = k_ring.index(step % STAGES)
'''


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    lib = absolute_imports(Path("pagedattn/ops/unified_keys_rows.py").read_text())
    text = replaced(
        lib,
        ('"""Decode and verify attention', '"""v32 probe (build/v32/ukr_claim.py, make_variants.py): decode and verify attention'),
        ("from triton.experimental import gluon\n", "import torch\nfrom triton.experimental import gluon\n"),
        ("BATCH_SIZED_ARGS, _e4m3_pair, _fill_ring, _issue_tile, _no_queries, _query_block, _segment_tiles, _tile_pages,",
         "BATCH_SIZED_ARGS, _e4m3_pair, _issue_tile, _no_queries, _query_block, _tile_pages,"),
        ("\n\n@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + [\"q_blocks\"])", HELPERS),
        ("q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr, cu_q_ptr,", "q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr, counter_ptr, cu_q_ptr,"),
        (SETUP_OLD, SETUP_NEW), (EXIT_OLD, EXIT_NEW), (FILL_OLD, FILL_NEW), (LOOP_OLD, LOOP_NEW),
        ("        v_slot = v_pairs.index(t % STAGES)\n", "        v_slot = v_pairs.index(step % STAGES)\n"),
        ("        usable = usable_smem.index(t % STAGES).load(KEYS) != 0\n",
         "        usable = usable_smem.index(step % STAGES).load(KEYS) != 0\n"),
        ('''        p_smem.store(p.to(gl.float16))
        fence_async_shared()
        gl.thread_barrier()  # every warp's P^T rows and vote
''', '''        p_smem.store(p.to(gl.float16))
        _publish_claim(claim_smem, claim, pool_first, pool, num_tiles)
        fence_async_shared()
        gl.thread_barrier()  # every warp's P^T rows and vote; the claimed tile
'''),
        ('''            o_even, o_odd = warpgroup_mma_wait(num_outstanding=0, deps=(o_even, o_odd))
    async_copy.wait_group(0)
''', '''            o_even, o_odd = warpgroup_mma_wait(num_outstanding=0, deps=(o_even, o_odd))
        ring = gl.where(gl.arange(0, R, layout=RING) == (step + FIRST) % R, _claimed_tile(claim_smem), ring)
        step += 1
        t = _step_tile(ring, step, split, num_splits, num_tiles, FIRST)
    async_copy.wait_group(0)
'''),
        ("\n\ndef launch_unified_keys_rows(", LAUNCHER),
        ("        q, k_cache, v_cache, out, part, lse, cu_seqlens_q,",
         "        q, k_cache, v_cache, out, part, lse, _counters(q.device, seq_lens.shape[0] * q_blocks * num_kv_heads),\n"
         "        cu_seqlens_q,"),
    )
    (OUT / "ukr_claim.py").write_text(text)


if __name__ == "__main__":
    main()
