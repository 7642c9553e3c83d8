"""v38: build the probe kernel files under build/v38 (ignored; run this from the repository root before the A/B script,
and carry build/v38 to the device). Every probe is an edit of commit BASE's ops/verify_wgmma.py (the page addressing
both Gluon unified kernels share) with its relative imports made absolute, and of BASE's ops/unified_keys_rows.py made
to import that edit:
  vw_base.py / ukr_base.py    BASE's kernels as they are (the A/B's baseline);
  vw_one.py / ukr_one.py      v37 item 4's bounds: a tile's usable rows by one compare per row against the least of the
                              sequence's length, the segment's end and the table's width, the page id's range by one
                              unsigned compare (v37 call 5: BF16 MTP 0.979-0.987x, q=1 1.051x);
  vw_end.py / ukr_end.py      the one compare per row, the page id's range by two signed compares as BASE does;
  vw_uns.py / ukr_uns.py      BASE's three compares per row, the page id's range by one unsigned compare;
  ukr_one_top.py, ukr_uns_top.py  ukr_one.py's and ukr_uns.py's loop with the next step's page-table entries read at
                              the top of the step, before its wait and barrier (ptxas issues ukr_one's after the
                              copies, half after the fence: perf-notes v37 item 4).
Each edit asserts that the text it replaces occurs once (`scripts/variant_source.replaced`).
Usage: make_variants.py (from the repository root)"""
import sys
from pathlib import Path
sys.path.insert(0, "scripts")
from variant_source import absolute_imports, git_show, replaced  # noqa: E402

OUT = Path("build/v38")
BASE = "97f0dc6"  # v37's last commit
HELPERS = "pagedattn/ops/verify_wgmma.py"
KEYS_ROWS = "pagedattn/ops/unified_keys_rows.py"
HELPERS_IMPORT = "from pagedattn.ops.verify_wgmma import ("

ROW_BOUNDS = "    return _table_entries(table_row, page, (pos < kv_len) & (t < tile_hi), max_blocks, num_blocks)"
ONE_BOUND = """    end = gl.minimum(gl.minimum(kv_len, tile_hi * TILE_N), max_blocks * PAGE)  # keys past it are not usable
    in_range = pos < end
    phys = gl.load(table_row + page, mask=in_range, other=-1)"""
UNSIGNED = "    return phys, in_range & (phys.to(gl.uint32, bitcast=True) < num_blocks.to(gl.uint32, bitcast=True))"
SIGNED = "    return phys, in_range & (phys >= 0) & (phys < num_blocks)"
VARIANTS = {"one": ONE_BOUND + "\n" + UNSIGNED, "end": ONE_BOUND + "\n" + SIGNED}
TABLE_OLD = "    return phys, in_range & (phys >= 0) & (phys < num_blocks)\n"
TABLE_UNSIGNED = UNSIGNED + "\n"
READ_LATE = """        async_copy.wait_group(STAGES - 2)
        gl.thread_barrier()  # tile t landed for every warp; all are done with tile t - 1's slot and P^T
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, t + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
        phys, ok = _tile_pages(table_row, t + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
"""
READ_TOP = """        phys, ok = _tile_pages(table_row, t + STAGES, tile_hi, kv_len, max_blocks, num_blocks, TILE_N, PAGE, COPY)
        async_copy.wait_group(STAGES - 2)
        gl.thread_barrier()  # tile t landed for every warp; all are done with tile t - 1's slot and P^T
        _issue_tile(k_ptr, v_ptr, k_ring, v_ring, usable_smem, pages, pages >= 0, t + STAGES - 1, k_head, v_head,
                    stride_k_block, stride_k_slot, stride_v_block, stride_v_slot, TILE_N, D, PAGE, STAGES,
                    SAME_STRIDES, COPY)
"""


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    helpers = absolute_imports(git_show(f"{BASE}:{HELPERS}"))
    keys_rows = absolute_imports(git_show(f"{BASE}:{KEYS_ROWS}"))
    edited = {"base": helpers, "uns": replaced(helpers, (TABLE_OLD, TABLE_UNSIGNED))}
    edited.update({name: replaced(helpers, (ROW_BOUNDS, body)) for name, body in VARIANTS.items()})
    for name, text in edited.items():
        (OUT / f"vw_{name}.py").write_text(text)
        (OUT / f"ukr_{name}.py").write_text(replaced(keys_rows, (HELPERS_IMPORT, f"from vw_{name} import (")))
    for name in ("one", "uns"):
        (OUT / f"ukr_{name}_top.py").write_text(replaced(keys_rows, (HELPERS_IMPORT, f"from vw_{name} import ("),
                                                         (READ_LATE, READ_TOP)))


if __name__ == "__main__":
    main()
