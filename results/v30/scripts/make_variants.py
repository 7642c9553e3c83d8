"""v30: build the probe kernel file call 5 ran into build/v30 (ignored; run this from the repository root
before prefetch_ab.py, and carry build/v30 to the device):
  ukr_prefetch.py  ops/unified_keys_rows.py (as in the tree) with its relative imports made absolute and, right after
                   the query block's bounds are asked for, an L2 prefetch of the page-table entries of the segment's
                   first STAGES tiles as the segment would be if the sequence filled its table row (max_blocks x PAGE
                   keys): the real read of those entries, which waits for the bounds, then hits L2 when the guess is
                   right (the bench's tables are as wide as their sequences); a wrong guess costs one wasted line.
Each edit asserts that the text it replaces occurs once (`scripts/variant_source.replaced`).
Usage: make_variants.py (from the repository root)"""
import sys
from pathlib import Path
sys.path.insert(0, "scripts")
from variant_source import absolute_imports, replaced  # noqa: E402

OUT = Path("build/v30")


PREFETCH = '''

@gluon.jit
def _prefetch_l2(ptrs):
    """Ask L2 for the lines at `ptrs` (int32 pointers); nothing waits for them."""
    gl.inline_asm_elementwise("prefetch.global.L2 [$1]; mov.b32 $0, 0;", "=r,l", [ptrs], dtype=gl.int32,
                              is_pure=False, pack=1)


@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + ["q_blocks"])'''

GUESS = '''    seq, q_first, q_len, kv_len = _query_block(cu_q_ptr, seq_lens_ptr, q_blocks, HN // GROUP, MULTI_BLOCK)
    kv_head = gl.program_id(1)
    split = gl.program_id(2)
    guess_lo, _ = _segment_tiles(max_blocks * PAGE, split, num_splits, TILE_N)  # as if the table row were full
    ends = guess_lo * TILE_N // PAGE + gl.arange(0, 2, layout=gl.BlockedLayout([1], [32], [TILE_N // 16], [0])) * \\
        ((STAGES * TILE_N - 1) // PAGE)  # the first and last entry of the first STAGES tiles
    _prefetch_l2(table_ptr + seq.to(gl.int64) * stride_table + gl.minimum(ends, max_blocks - 1))
'''


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    lib = absolute_imports(Path("pagedattn/ops/unified_keys_rows.py").read_text())
    text = replaced(lib, ('"""Decode and verify attention', '"""v30 probe (build/v30/ukr_prefetch.py, make_variants.py): decode and verify attention'),
                    ("\n\n@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS + [\"q_blocks\"])", PREFETCH),
                    ('''    seq, q_first, q_len, kv_len = _query_block(cu_q_ptr, seq_lens_ptr, q_blocks, HN // GROUP, MULTI_BLOCK)
    kv_head = gl.program_id(1)
    split = gl.program_id(2)
''', GUESS))
    (OUT / "ukr_prefetch.py").write_text(text)


if __name__ == "__main__":
    main()
