"""v29: build the probe kernel files calls 2-4 and 6 ran into build/v29 (ignored; run this from the
repository root before the A/B scripts, and carry build/v29 to the device):
  ukr16.py          the keys-as-rows kernel for 16-bit pages: pagedattn/ops/unified_keys_rows_16bit.py as
                    committed in a5cdeb4 (calls 2-4 ran it from there; branch wip/bf16-keys-rows keeps it),
                    relative imports made absolute;
  ukr16_k_ahead.py  K copied one tile further ahead than V, in a 3-deep or a 2-deep K ring (call 3);
  ukr16_parts.py    the 2-stage loop cut in parts, math only or copies only, for timing and power (call 4);
  ukr8_columns.py   ukr16.py's layout for FP8 pages (call 6).
Each edit asserts that the text it replaces occurs as often as it expects.
Usage: make_variants.py (from the repository root)"""
import sys
from pathlib import Path
sys.path.insert(0, "scripts")
from variant_source import absolute_imports, git_show, replaced  # noqa: E402

OUT = Path("build/v29")
SOURCE = ("a5cdeb4", "pagedattn/ops/unified_keys_rows_16bit.py")


def new_docstring(text: str, doc: str) -> str:
    return doc + text[text.index('"""', 3) + 3:]


def indented(text: str) -> str:
    """text one level (4 spaces) deeper: a block moved under an `if`."""
    return "".join("    " + line if line.strip() else line for line in text.splitlines(True))


# a loop step's copies of the next tile and its page-table read, in ukr16.py
NEXT_TILE_COPIES = """        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, t + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
        phys, ok = _tile_pages(table_row, t + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        pages = gl.where(ok, phys, -1)
"""


def library_file() -> str:
    commit, path = SOURCE
    return absolute_imports(git_show(f"{commit}:{path}"))


def ukr16(lib: str) -> str:
    head = '"""Verify attention over 16-bit pages with the keys as the rows of Q.K^T on Hopper\'s wgmma, in Gluon.\n'
    assert lib.startswith(head)
    return ('"""v29 probe (calls 2-4; parked: the library form is on branch wip/bf16-keys-rows as\n'
            'pagedattn/ops/unified_keys_rows_16bit.py): verify attention over 16-bit pages with the keys as the rows\n'
            'of Q.K^T on Hopper\'s wgmma, in Gluon. Not routed by the profile layer; perf-notes v29.\n') + lib[len(head):]


K_AHEAD_DOC = '''"""v29 call 3 probe: results/v29/scripts/ukr16.py with K copied one tile further ahead than V.
Each step issues V(t + 1) at its top and K(t + 2) either at its top into a 3-deep K ring (K_STAGES 3:
3 x 32 + 2 x 32 + 32 + 8 KB = 200 KB) or, with a 2-deep K ring (K_STAGES 2), after the barrier that
follows the softmax (all warps' Q.K^T on K(t) done, so its slot is free). V's ring stays 2 deep. Copy
groups per step: V(t + 1), K(t + 2); K(t) is waited for at the top (2 later groups may stay in flight),
V(t) before the softmax's barrier (2 later groups, 3 when K(t + 2) was already issued). The page-table
entries of tiles t + 1 and t + 2 are carried in registers, t + 3's read each step."""
'''


def ukr16_k_ahead(lib: str) -> str:
    return replaced(
        new_docstring(lib, K_AHEAD_DOC),
        ("from pagedattn.ops.verify_wgmma import BATCH_SIZED_ARGS, _fill_ring, _issue_tile, _no_queries, _query_block, _segment_tiles, _tile_pages",
         "from pagedattn.ops.verify_wgmma import BATCH_SIZED_ARGS, _no_queries, _query_block, _segment_tiles, _tile_pages"),
        ("""@gluon.jit(do_not_specialize""", '''@gluon.jit
def _copy_rows(ptr, ring, phys, ok, t, head, stride_block, stride_slot, TILE_N: gl.constexpr, D: gl.constexpr,
               PAGE: gl.constexpr, DEPTH: gl.constexpr, COPY: gl.constexpr):
    """cp.async of tile t's rows of one cache (pages phys, usable ok) into ring slot t % DEPTH, one group."""
    slot = (t * TILE_N + gl.arange(0, TILE_N, layout=gl.SliceLayout(1, COPY))) % PAGE
    rows = phys.to(gl.int64) * stride_block + slot * stride_slot + head
    cols = gl.arange(0, D, layout=gl.SliceLayout(0, COPY))
    async_copy.async_copy_global_to_shared(ring.index(t % DEPTH), ptr + rows[:, None] + cols[None, :], mask=ok[:, None])
    async_copy.commit_group()


@gluon.jit(do_not_specialize'''),
        ("    P_IN_K_SLOT: gl.constexpr,\n):", "    P_IN_K_SLOT: gl.constexpr, K_STAGES: gl.constexpr,\n):"),
        ("""    k_ring = gl.allocate_shared_memory(KV, [STAGES, TILE_N, D], RING)
    v_ring = gl.allocate_shared_memory(KV, [STAGES, TILE_N, D], RING)
    usable_smem = gl.allocate_shared_memory(gl.int8, [STAGES, TILE_N], FLAT)""",
         """    k_ring = gl.allocate_shared_memory(KV, [K_STAGES, TILE_N, D], RING)
    v_ring = gl.allocate_shared_memory(KV, [2, TILE_N, D], RING)
    usable_smem = gl.allocate_shared_memory(gl.int8, [K_STAGES, TILE_N], FLAT)"""),
        ("""    _fill_ring(k_ptr, v_ptr, k_ring, v_ring, usable_smem, table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks,
               k_head, v_head, stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
               SAME_STRIDES, COPY)
    phys, ok = _tile_pages(table_row, tile_lo + STAGES - 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages = gl.where(ok, phys, -1)
""", """    phys, ok = _tile_pages(table_row, tile_lo, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    _copy_rows(k_ptr, k_ring, phys, ok, tile_lo, k_head, stride_k_block, stride_k_slot, TILE_N, D, PAGE, K_STAGES, COPY)
    usable_smem.index(tile_lo % K_STAGES).store(ok.to(gl.int8))
    _copy_rows(v_ptr, v_ring, phys, ok, tile_lo, v_head, stride_v_block, stride_v_slot, TILE_N, D, PAGE, 2, COPY)
    phys, ok = _tile_pages(table_row, tile_lo + 1, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    _copy_rows(k_ptr, k_ring, phys, ok, tile_lo + 1, k_head, stride_k_block, stride_k_slot, TILE_N, D, PAGE, K_STAGES,
               COPY)
    usable_smem.index((tile_lo + 1) % K_STAGES).store(ok.to(gl.int8))
    pages_near = gl.where(ok, phys, -1)  # tile t + 1's, for V
    phys, ok = _tile_pages(table_row, tile_lo + 2, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
    pages_far = gl.where(ok, phys, -1)  # tile t + 2's, for K
"""),
        ("""        async_copy.wait_group(STAGES - 2)
        gl.thread_barrier()  # tile t landed for every warp; all are done with tile t - 1's slot and P
""" + NEXT_TILE_COPIES + """        fence_async_shared()
        k_tile = k_ring.index(t % STAGES)""", """        async_copy.wait_group(2)
        gl.thread_barrier()  # K(t) landed for every warp; all are done with tile t - 1's slots and P
        _copy_rows(v_ptr, v_ring, pages_near, pages_near >= 0, t + 1, v_head, stride_v_block, stride_v_slot, TILE_N, D,
                   PAGE, 2, COPY)
        if K_STAGES == 3:
            _copy_rows(k_ptr, k_ring, pages_far, pages_far >= 0, t + 2, k_head, stride_k_block, stride_k_slot, TILE_N,
                       D, PAGE, K_STAGES, COPY)
            usable_smem.index((t + 2) % K_STAGES).store((pages_far >= 0).to(gl.int8))
        phys, ok = _tile_pages(table_row, t + 3, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        fence_async_shared()
        k_tile = k_ring.index(t % K_STAGES)"""),
        ("usable = usable_smem.index(t % STAGES).load(KEYS) != 0", "usable = usable_smem.index(t % K_STAGES).load(KEYS) != 0"),
        ("""        p_smem.store(gl.permute(p.to(KV), [1, 0]))
        fence_async_shared()
        gl.thread_barrier()  # every warp's P columns and vote
""", """        p_smem.store(gl.permute(p.to(KV), [1, 0]))
        async_copy.wait_group(2 + (K_STAGES == 3))  # V(t)
        fence_async_shared()
        gl.thread_barrier()  # every warp's P columns and vote; V(t) landed; K(t) read by every warp
        if K_STAGES == 2:
            _copy_rows(k_ptr, k_ring, pages_far, pages_far >= 0, t + 2, k_head, stride_k_block, stride_k_slot, TILE_N,
                       D, PAGE, K_STAGES, COPY)
            usable_smem.index((t + 2) % K_STAGES).store((pages_far >= 0).to(gl.int8))
"""),
        ("""        o = warpgroup_mma(p_smem, v_ring.index(t % STAGES), o, is_async=True)
        o = warpgroup_mma_wait(num_outstanding=0, deps=(o,))
""", """        o = warpgroup_mma(p_smem, v_ring.index(t % 2), o, is_async=True)
        o = warpgroup_mma_wait(num_outstanding=0, deps=(o,))
        pages_near = pages_far
        pages_far = gl.where(ok, phys, -1)
"""),
        ("MULTI_BLOCK=q_blocks > 1, P_IN_K_SLOT=p_in_k_slot, num_warps",
         "MULTI_BLOCK=q_blocks > 1, P_IN_K_SLOT=p_in_k_slot, K_STAGES=profile.num_stages, num_warps"),
        ("def launch_unified_keys_rows_16bit(", "def launch_k_ahead("),
    )


PARTS_DOC = '''"""v29 call 4 probe: results/v29/scripts/ukr16.py (2 stages) with its loop cut in parts, for timing
and power only (results are wrong by design when a part is off): DO_COPY False issues no copies after the
ring's prologue (the products run on the ring's first tiles again and again: the loop's math alone), DO_MATH
False skips the products and the softmax (each step waits for its tile, then issues the next: the copies alone)."""
'''


def ukr16_parts(lib: str) -> str:
    src = replaced(
        new_docstring(lib, PARTS_DOC),
        ("    P_IN_K_SLOT: gl.constexpr,\n):", "    P_IN_K_SLOT: gl.constexpr, DO_COPY: gl.constexpr, DO_MATH: gl.constexpr,\n):"),
        (NEXT_TILE_COPIES + "        fence_async_shared()\n",
         "        if DO_COPY:\n" + indented(NEXT_TILE_COPIES) + "        fence_async_shared()\n"))
    start = src.index("        k_tile = k_ring.index(t % STAGES)")  # the loop's math, under `if DO_MATH:`
    end = src.index("    async_copy.wait_group(0)\n")
    src = src[:start] + "        if DO_MATH:\n" + indented(src[start:end]) + src[end:]
    return replaced(
        src,
        ("MULTI_BLOCK=q_blocks > 1, P_IN_K_SLOT=p_in_k_slot, num_warps",
         "MULTI_BLOCK=q_blocks > 1, P_IN_K_SLOT=p_in_k_slot, DO_COPY=do_copy, DO_MATH=do_math, num_warps"),
        ("profile: LaunchProfile, p_in_k_slot: bool = False) -> None:",
         "profile: LaunchProfile, p_in_k_slot: bool = False, do_copy: bool = True,\n"
         "                                   do_math: bool = True) -> None:"),
        ("def launch_unified_keys_rows_16bit(", "def launch_parts("),
    )


COLUMNS_DOC = '''"""v29 call 6 probe: results/v29/scripts/ukr16.py's layout (two warpgroups split S^T's 64 packed columns and O's
head dimensions; 64 keys per step, one program per SM) for FP8 pages, against ops/unified_keys_rows.py (two
warpgroups split 128 keys, O^T = V^T.P^T with V converted in registers):
* S^T = K.Q^T on FP8 wgmma with q as ops/verify_wgmma.py's two e4m3 tiles (`_e4m3_pair`), m64n32k32, 8 steps
  each; 2^-k per column, the softmax scale and k_scale scale the scores per column;
* V is converted once per tile into an fp16 [keys, head] tile in shared memory (every thread 64 values),
  before the softmax's barrier, and O = P.V reads it as the N-major B operand (FP8 wgmma reads only K-major
  operands); v_scale scales the output.
Shared memory: stages x 32 KB (K, V) + 32 KB (q's two tiles) + 32 KB (fp16 V) + 8 KB (P): 137 KB at 2
stages, 169 at 3, 201 at 4."""
'''


def ukr8_columns(base: str) -> str:
    return replaced(
        new_docstring(base, COLUMNS_DOC),
        ("from pagedattn.ops.verify_wgmma import BATCH_SIZED_ARGS, _fill_ring, _issue_tile, _no_queries, _query_block, _segment_tiles, _tile_pages",
         "from pagedattn.ops.verify_wgmma import (\n    BATCH_SIZED_ARGS, _e4m3_pair, _fill_ring, _issue_tile, _no_queries, _query_block, _segment_tiles, _tile_pages,\n)"),
        ("def unified_keys_rows_16bit_kernel(", "def unified_keys_rows_fp8_columns_kernel("),
        ("    P_IN_K_SLOT: gl.constexpr,\n):", "):"),
        ("""    KV: gl.constexpr = k_ptr.dtype.element_ty
""", ""),
        ("COPY: gl.constexpr = gl.BlockedLayout([1, 8], [32 * 8 // D, D // 8], [gl.num_warps(), 1], [1, 0])",
         "COPY: gl.constexpr = gl.BlockedLayout([1, 16], [32 * 16 // D, D // 16], [gl.num_warps(), 1], [1, 0])\n"
         "    Q_LOAD: gl.constexpr = gl.BlockedLayout([1, 8], [32 * 8 // D, D // 8], [gl.num_warps(), 1], [1, 0])"),
        ("instr_shape=[16, HN // HALVES, 16])\n    O_MMA", "instr_shape=[16, HN // HALVES, 32])\n    O_MMA"),
        ("""    offs_q = gl.arange(0, HN, layout=gl.SliceLayout(1, COPY))""",
         """    offs_q = gl.arange(0, HN, layout=gl.SliceLayout(1, Q_LOAD))"""),
        ("""    q = gl.load(q_ptr + q_rows[:, None] + gl.arange(0, D, layout=gl.SliceLayout(0, COPY))[None, :],""",
         """    q = gl.load(q_ptr + q_rows[:, None] + gl.arange(0, D, layout=gl.SliceLayout(0, Q_LOAD))[None, :],"""),
        ("""    RING: gl.constexpr = gl.NVMMASharedLayout.get_default_for([TILE_N, D], KV)
    k_ring = gl.allocate_shared_memory(KV, [STAGES, TILE_N, D], RING)
    v_ring = gl.allocate_shared_memory(KV, [STAGES, TILE_N, D], RING)
""", """    k_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D],
                                       gl.NVMMASharedLayout.get_default_for([TILE_N, D], gl.float8e4nv))
    v_ring = gl.allocate_shared_memory(gl.float8e4nv, [STAGES, TILE_N, D], gl.SwizzledSharedLayout(16, 1, 8, order=[1, 0]))
    V16: gl.constexpr = gl.NVMMASharedLayout.get_default_for([TILE_N, D], gl.float16)
    v16_smem = gl.allocate_shared_memory(gl.float16, [TILE_N, D], V16)
    CONVERT: gl.constexpr = gl.BlockedLayout([1, 16], [32 * 16 // D, D // 16], [gl.num_warps(), 1], [1, 0])
"""),
        ("""    P_SMEM: gl.constexpr = gl.NVMMASharedLayout.get_default_for([HN, TILE_N], KV)
    if not P_IN_K_SLOT:
        p_smem = gl.allocate_shared_memory(KV, [HN, TILE_N], P_SMEM)
""", """    p_smem = gl.allocate_shared_memory(gl.float16, [HN, TILE_N], gl.NVMMASharedLayout.get_default_for([HN, TILE_N], gl.float16))
"""),
        ("""    q_smem = gl.allocate_shared_memory(KV, [HN, D], gl.NVMMASharedLayout.get_default_for([HN, D], KV), q.to(KV))
    score_scale = softmax_scale * LOG2E * load_scale(k_scale_ptr, k_scale_value, K_SCALE_TENSOR)
    offs_c = gl.arange(0, HN, layout=COLS)
""", """    q_hi, q_lo, down = _e4m3_pair(q.to(gl.float32))
    Q_SMEM: gl.constexpr = gl.NVMMASharedLayout.get_default_for([HN, D], gl.float8e4nv)
    q_hi_smem = gl.allocate_shared_memory(gl.float8e4nv, [HN, D], Q_SMEM, q_hi)
    q_lo_smem = gl.allocate_shared_memory(gl.float8e4nv, [HN, D], Q_SMEM, q_lo)
    offs_c = gl.arange(0, HN, layout=COLS)
    col_scale = gl.convert_layout(down, COLS) * (softmax_scale * LOG2E
                                                 * load_scale(k_scale_ptr, k_scale_value, K_SCALE_TENSOR))
"""),
        ("""        s = warpgroup_mma(k_tile, q_smem.permute([1, 0]), gl.zeros([TILE_N, HN], gl.float32, S_MMA),
                          use_acc=False, is_async=True)
""", """        s = warpgroup_mma(k_tile, q_hi_smem.permute([1, 0]), gl.zeros([TILE_N, HN], gl.float32, S_MMA),
                          use_acc=False, is_async=True)
        s = warpgroup_mma(k_tile, q_lo_smem.permute([1, 0]), s, is_async=True)
        v_raw = v_ring.index(t % STAGES).load(CONVERT)
"""),
        ("gl.fma(s, score_scale, -m_i[None, :])", "gl.fma(s, col_scale[None, :], -m_i[None, :])", 3),
        ("s * score_scale", "s * col_scale[None, :]"),
        ("""        if P_IN_K_SLOT:
            gl.thread_barrier()  # both warpgroups' Q.K^T have read the slot's keys
            p_smem = k_tile._reinterpret(KV, [HN, TILE_N], P_SMEM)
        p_smem.store(gl.permute(p.to(KV), [1, 0]))
        fence_async_shared()
        gl.thread_barrier()  # every warp's P columns and vote
""", """        p_smem.store(gl.permute(p.to(gl.float16), [1, 0]))
        v16_smem.store(v_raw.to(gl.float16))
        fence_async_shared()
        gl.thread_barrier()  # every warp's P columns, vote and fp16 V
"""),
        ("""            p_smem.store(gl.permute(p.to(KV), [1, 0]))
            fence_async_shared()""", """            p_smem.store(gl.permute(p.to(gl.float16), [1, 0]))
            fence_async_shared()"""),
        ("o = warpgroup_mma(p_smem, v_ring.index(t % STAGES), o, is_async=True)",
         "o = warpgroup_mma(p_smem, v16_smem, o, is_async=True)"),
        ("unified_keys_rows_16bit_kernel[(", "unified_keys_rows_fp8_columns_kernel[("),
        ("MULTI_BLOCK=q_blocks > 1, P_IN_K_SLOT=p_in_k_slot, num_warps", "MULTI_BLOCK=q_blocks > 1, num_warps"),
        ("profile: LaunchProfile, p_in_k_slot: bool = False) -> None:", "profile: LaunchProfile) -> None:"),
        ("def launch_unified_keys_rows_16bit(", "def launch_fp8_columns("),
    )


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    lib = library_file()
    base = ukr16(lib)
    for name, text in (("ukr16", base), ("ukr16_k_ahead", ukr16_k_ahead(lib)), ("ukr16_parts", ukr16_parts(lib)),
                       ("ukr8_columns", ukr8_columns(base))):
        (OUT / f"{name}.py").write_text(text)
        print(OUT / f"{name}.py")
