"""v31: build the probe kernel files into build/v31 (ignored; run this from the repository root before fused_ab.py
or fused_stamps.py, and carry build/v31 to the device):
  ukr_fused_v1.py  (call 1, then named ukr_fused.py) ops/unified_keys_rows.py (as in the tree) with its relative imports made absolute and the split
                merge done inside the kernel by the last programs of each query block to finish: every program
                (empty segments too) counts itself on a per-(query block, KV head) counter after its partial
                rows and lse are stored (CTA barrier, then one release atomic, as a semaphore's arrive); the
                last `mergers` to arrive (min(splits, units), a unit being one packed column's COLUMNS-wide head
                slice, `common.merge_shape`'s columns) wait for the count to reach the split count (acquire),
                then each merges its units from L2 (the merge kernel's math, its lines dropped after) into `out`;
                each merger counts itself once more and the last one resets the counter to 0, so the persistent
                counter buffer is zero again for the next call (CUDA graphs need no reset node). Only where the
                whole grid is resident at once (programs <= SMs x 1 for 128-key tiles, x 2 for 64), since a
                waiting merger holds its SM slot; there the launcher launches no merge kernel (FUSED), elsewhere
                the library's merge kernel runs as before.
  ukr_fused_v2.py  (call 5) v1 with each split's lse loaded by one thread and each partial line dropped by one
                thread (v1: the 8 threads of a row of the values' layout), a unit as wide as 64 values per thread
                allow, and the merge in the kernel only where every merger has one unit.
  ukr_fused_v2_keep.py  v2 without dropping the partials' lines.
Each edit asserts that the text it replaces occurs once (`scripts/variant_source.replaced`).
Usage: make_variants.py (from the repository root)"""
import sys
from pathlib import Path
sys.path.insert(0, "scripts")
from variant_source import absolute_imports, replaced  # noqa: E402

OUT = Path("build/v31")

HELPERS = '''

@gluon.jit
def _discard_lines(ptrs, first_of_line):
    gl.inline_asm_elementwise(
        "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p discard.global.L2 [$2], 128; mov.b32 $0, 0; }",
        "=r,r,l", [first_of_line.to(gl.int32), ptrs], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def _merge_units(part_ptr, lse_ptr, out_ptr, merger, mergers, units, num_splits, num_tokens, q_first, kv_head,
                 stride_o_tok, stride_o_head, NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, D: gl.constexpr,
                 COLUMNS: gl.constexpr, CHUNK_S: gl.constexpr, WARPS: gl.constexpr, DISCARD: gl.constexpr):
    """Units merger, merger + mergers, ... < units of this query block: unit u is packed column
    u // (D // COLUMNS) (token q_first + c // GROUP, head kv_head x GROUP + c % GROUP), head dimensions
    (u % (D // COLUMNS)) x COLUMNS on; the merge kernel's sum over splits, CHUNK_S splits per round trip."""
    MERGE: gl.constexpr = gl.BlockedLayout([1, 4], [32 // (COLUMNS // 4) if COLUMNS < 128 else 1,
                                                    COLUMNS // 4 if COLUMNS < 128 else 32], [WARPS, 1], [1, 0])
    offs_s = gl.arange(0, CHUNK_S, layout=gl.SliceLayout(1, MERGE))
    offs_w = gl.arange(0, COLUMNS, layout=gl.SliceLayout(0, MERGE))
    lines = gl.arange(0, COLUMNS // 32, layout=gl.SliceLayout(0, MERGE)) * 32
    for u in range(merger, units, mergers):
        c = u // (D // COLUMNS)
        token = q_first + c // GROUP
        head = kv_head * GROUP + c % GROUP
        first_d = u % (D // COLUMNS) * COLUMNS
        top = -float("inf")
        total = 0.0
        acc = gl.zeros([COLUMNS], gl.float32, gl.SliceLayout(0, MERGE))
        for first in range(0, num_splits, CHUNK_S):
            split_ok = first + offs_s < num_splits
            slot = ((first + offs_s).to(gl.int64) * num_tokens + token) * NUM_Q_HEADS + head
            lse = gl.load(lse_ptr + slot, mask=split_ok, other=float("-inf"), cache_modifier=".cg")
            o = gl.load(part_ptr + slot[:, None] * D + first_d + offs_w[None, :], mask=split_ok[:, None], other=0.0,
                        cache_modifier=".cg")
            new_top = gl.maximum(top, gl.max(lse, 0))
            base = gl.where(new_top == float("-inf"), 0.0, new_top)
            rescale = gl.exp2(top - base)
            w = gl.exp2(lse - base)
            acc = acc * rescale + gl.sum(gl.where(w[:, None] > 0.0, o, 0.0) * w[:, None], 0)
            total = total * rescale + gl.sum(w, 0)
            top = new_top
            if DISCARD:
                gl.thread_barrier()  # every thread's loads of the chunk have returned
                _discard_lines(part_ptr + slot[:, None] * D + first_d + lines[None, :],
                               split_ok[:, None] & (lines < COLUMNS)[None, :])
        res = acc / gl.where(total > 0.0, total, 1.0)
        gl.store(out_ptr + token.to(gl.int64) * stride_o_tok + head * stride_o_head + first_d + offs_w,
                 res.to(out_ptr.dtype.element_ty))


@gluon.jit
def _arrive_and_merge(part_ptr, lse_ptr, out_ptr, counter_ptr, num_splits, num_tokens, q_first, q_len, kv_head,
                      stride_o_tok, stride_o_head, NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, HN: gl.constexpr,
                      D: gl.constexpr, COLUMNS: gl.constexpr, CHUNK_S: gl.constexpr, WARPS: gl.constexpr,
                      DISCARD: gl.constexpr):
    """Count this program's partial as stored; the last `mergers` programs of the query block to
    count themselves merge its partials into `out` once every split has counted, and leave the
    counter at 0."""
    counter = counter_ptr + gl.program_id(0) * gl.num_programs(1) + kv_head
    gl.thread_barrier()  # every thread's partial stores precede the release below
    ticket = gl.atomic_add(counter, 1, sem="acq_rel", scope="gpu")
    units = GROUP * gl.minimum(q_len, HN // GROUP) * (D // COLUMNS)
    mergers = gl.minimum(num_splits, units)
    merger = ticket - (num_splits - mergers)
    if merger >= 0:
        seen = ticket + 1
        while seen < num_splits:
            seen = gl.atomic_add(counter, 0, sem="acquire", scope="gpu")
        _merge_units(part_ptr, lse_ptr, out_ptr, merger, mergers, units, num_splits, num_tokens, q_first, kv_head,
                     stride_o_tok, stride_o_head, NUM_Q_HEADS, GROUP, D, COLUMNS, CHUNK_S, WARPS, DISCARD)
        if gl.atomic_add(counter, 1, sem="relaxed", scope="gpu") == num_splits + mergers - 1:
            gl.atomic_xchg(counter, 0, sem="relaxed", scope="gpu")


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


V1_MERGE = HELPERS[HELPERS.index("@gluon.jit\ndef _merge_units("):HELPERS.index("@gluon.jit\ndef _arrive_and_merge(")]
V2_MERGE = """@gluon.jit
def _merge_units(part_ptr, lse_ptr, out_ptr, merger, mergers, units, num_splits, num_tokens, q_first, kv_head,
                 stride_o_tok, stride_o_head, NUM_Q_HEADS: gl.constexpr, GROUP: gl.constexpr, D: gl.constexpr,
                 COLUMNS: gl.constexpr, CHUNK_S: gl.constexpr, WARPS: gl.constexpr, DISCARD: gl.constexpr):
    '''v2: as v1, but each split's lse is loaded by one thread (v1: by all 8 threads of a row of the
    values' layout) and each partial line dropped by one thread (v1: 8).'''
    TC: gl.constexpr = COLUMNS // 4 if COLUMNS < 128 else 32
    MERGE: gl.constexpr = gl.BlockedLayout([1, 4], [32 // TC, TC], [WARPS, 1], [1, 0])
    SPLITS: gl.constexpr = gl.BlockedLayout([1], [32], [WARPS], [0])
    LINES: gl.constexpr = gl.BlockedLayout([1, 1], [32 // (COLUMNS // 32), COLUMNS // 32], [WARPS, 1], [1, 0])
    offs_s = gl.arange(0, CHUNK_S, layout=gl.SliceLayout(1, MERGE))
    offs_l = gl.arange(0, CHUNK_S, layout=SPLITS)
    offs_w = gl.arange(0, COLUMNS, layout=gl.SliceLayout(0, MERGE))
    line_s = gl.arange(0, CHUNK_S, layout=gl.SliceLayout(1, LINES))
    line_w = gl.arange(0, COLUMNS // 32, layout=gl.SliceLayout(0, LINES)) * 32
    for u in range(merger, units, mergers):
        c = u // (D // COLUMNS)
        token = q_first + c // GROUP
        head = kv_head * GROUP + c % GROUP
        first_d = u % (D // COLUMNS) * COLUMNS
        top = -float("inf")
        total = 0.0
        acc = gl.zeros([COLUMNS], gl.float32, gl.SliceLayout(0, MERGE))
        for first in range(0, num_splits, CHUNK_S):
            slot_l = ((first + offs_l).to(gl.int64) * num_tokens + token) * NUM_Q_HEADS + head
            lse = gl.load(lse_ptr + slot_l, mask=first + offs_l < num_splits, other=float("-inf"), cache_modifier=".cg")
            slot = ((first + offs_s).to(gl.int64) * num_tokens + token) * NUM_Q_HEADS + head
            o = gl.load(part_ptr + slot[:, None] * D + first_d + offs_w[None, :],
                        mask=(first + offs_s < num_splits)[:, None], other=0.0, cache_modifier=".cg")
            new_top = gl.maximum(top, gl.max(lse, 0))
            base = gl.where(new_top == float("-inf"), 0.0, new_top)
            rescale = gl.exp2(top - base)
            w_l = gl.exp2(lse - base)
            w = gl.convert_layout(w_l, gl.SliceLayout(1, MERGE))
            acc = acc * rescale + gl.sum(gl.where(w[:, None] > 0.0, o, 0.0) * w[:, None], 0)
            total = total * rescale + gl.sum(w_l, 0)
            top = new_top
            if DISCARD:
                gl.thread_barrier()  # every thread's loads of the chunk have returned
                slot_d = ((first + line_s).to(gl.int64) * num_tokens + token) * NUM_Q_HEADS + head
                _discard_lines(part_ptr + slot_d[:, None] * D + first_d + line_w[None, :],
                               (first + line_s < num_splits)[:, None] & (line_w < COLUMNS)[None, :])
        res = acc / gl.where(total > 0.0, total, 1.0)
        gl.store(out_ptr + token.to(gl.int64) * stride_o_tok + head * stride_o_head + first_d + offs_w,
                 res.to(out_ptr.dtype.element_ty))


"""
V1_SHAPE = ("    columns, chunk, _ = merge_shape(splits, head)\n"
            "    slots = torch.cuda.get_device_properties(q.device).multi_processor_count * (1 if profile.tile_n == 128 else 2)\n"
            "    fused = splits > 1 and rows * num_kv_heads * splits <= slots  # every program resident: spinning is safe\n")
V2_SHAPE = ("    splits_pad = triton.next_power_of_2(splits)\n"
            "    columns = min(head, max(32, 64 * 32 * profile.num_warps // splits_pad))  # 64 values per thread\n"
            "    chunk = min(splits_pad, 64 * 32 * profile.num_warps // columns)\n"
            "    slots = torch.cuda.get_device_properties(q.device).multi_processor_count * (1 if profile.tile_n == 128 else 2)\n"
            "    fused = (splits > 1 and rows * num_kv_heads * splits <= slots  # every program resident: spinning is safe\n"
            "             and profile.block_m * (head // columns) <= splits)  # one unit per merger\n")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    lib = absolute_imports(Path("pagedattn/ops/unified_keys_rows.py").read_text())
    text = replaced(
        lib,
        ('"""Decode and verify attention', '"""v31 probe (build/v31/ukr_fused.py, make_variants.py): decode and verify attention'),
        ("from triton.experimental import gluon\n", "import torch\nimport triton\nfrom triton.experimental import gluon\n"),
        ("from pagedattn.ops.common import LOG2E, RESCALE_SLACK, launch_merge, scale_args, split_workspace",
         "from pagedattn.ops.common import LOG2E, RESCALE_SLACK, launch_merge, merge_shape, scale_args, split_workspace"),
        ("\n\n@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + [\"q_blocks\"])", HELPERS),
        ("q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr, cu_q_ptr,", "q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr, counter_ptr, cu_q_ptr,"),
        ("    K_SCALE_TENSOR: gl.constexpr, V_SCALE_TENSOR: gl.constexpr, MULTI_BLOCK: gl.constexpr,\n):",
         "    K_SCALE_TENSOR: gl.constexpr, V_SCALE_TENSOR: gl.constexpr, MULTI_BLOCK: gl.constexpr,\n"
         "    FUSED: gl.constexpr, COLUMNS: gl.constexpr, CHUNK_S: gl.constexpr, DISCARD: gl.constexpr,\n):"),
        ('''            gl.store(lse_ptr + part_cols, gl.full([HN], float("-inf"), gl.float32, COLS), mask=col_ok)
            return''',
         '''            gl.store(lse_ptr + part_cols, gl.full([HN], float("-inf"), gl.float32, COLS), mask=col_ok)
            if FUSED:
                _arrive_and_merge(part_ptr, lse_ptr, out_ptr, counter_ptr, num_splits, num_tokens, q_first, q_len,
                                  kv_head, stride_o_tok, stride_o_head, NUM_Q_HEADS, GROUP, HN, D, COLUMNS, CHUNK_S,
                                  WARPS, DISCARD)
            return'''),
        ('''        gl.store(lse_ptr + part_cols, lse, mask=col_ok)
''', '''        gl.store(lse_ptr + part_cols, lse, mask=col_ok)
        if FUSED:
            _arrive_and_merge(part_ptr, lse_ptr, out_ptr, counter_ptr, num_splits, num_tokens, q_first, q_len, kv_head,
                              stride_o_tok, stride_o_head, NUM_Q_HEADS, GROUP, HN, D, COLUMNS, CHUNK_S, WARPS, DISCARD)
'''),
        ("\n\ndef launch_unified_keys_rows(", LAUNCHER),
        ("    unified_keys_rows_kernel[(seq_lens.shape[0] * q_blocks, num_kv_heads, splits)](\n"
         "        q, k_cache, v_cache, out, part, lse, cu_seqlens_q,",
         "    rows = seq_lens.shape[0] * q_blocks\n"
         "    columns, chunk, _ = merge_shape(splits, head)\n"
         "    slots = torch.cuda.get_device_properties(q.device).multi_processor_count * (1 if profile.tile_n == 128 else 2)\n"
         "    fused = splits > 1 and rows * num_kv_heads * splits <= slots  # every program resident: spinning is safe\n"
         "    unified_keys_rows_kernel[(rows, num_kv_heads, splits)](\n"
         "        q, k_cache, v_cache, out, part, lse, _counters(q.device, rows * num_kv_heads), cu_seqlens_q,"),
        ("        MULTI_BLOCK=q_blocks > 1, num_warps=profile.num_warps,\n    )\n    if splits > 1:\n        launch_merge(part, lse, out)",
         "        MULTI_BLOCK=q_blocks > 1, FUSED=fused, COLUMNS=columns, CHUNK_S=chunk, DISCARD=True,\n"
         "        num_warps=profile.num_warps,\n    )\n    if splits > 1 and not fused:\n        launch_merge(part, lse, out)"),
    )
    (OUT / "ukr_fused_v1.py").write_text(text)
    v2 = replaced(text, (V1_MERGE, V2_MERGE), (V1_SHAPE, V2_SHAPE), ("ukr_fused.py", "ukr_fused_v2.py"))
    (OUT / "ukr_fused_v2.py").write_text(v2)
    (OUT / "ukr_fused_v2_keep.py").write_text(replaced(v2, ("DISCARD=True,", "DISCARD=False,"),
                                                       ("ukr_fused_v2.py", "ukr_fused_v2_keep.py")))


if __name__ == "__main__":
    main()
