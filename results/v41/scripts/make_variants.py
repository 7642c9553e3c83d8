"""v41: build the streaming-merge probes of both Gluon unified kernels under build/v41 (ignored; run this from the
repository root before the A/B script, and carry build/v41 to the device). Each is an edit of commit BASE's kernel
file with its relative imports made absolute:
  ukr_stream.py  ops/unified_keys_rows.py (FP8 pages: the long request, FP8 MTP verify);
  vw_stream.py   ops/verify_wgmma.py (BF16 MTP verify).
With splits, a program releases the dependent merge at its start and reads the call's number (stream_merge.py),
publishes its partial rows' flags after its partial and lse stores (also where its segment starts past the
sequence's keys), and the launcher runs `stream_merge.launch_stream_merge` instead of `launch_merge`. Single-pass
builds are unchanged. Each edit asserts that the text it replaces occurs once (`scripts/variant_source.replaced`).
Usage: make_variants.py (from the repository root)"""
import sys
from pathlib import Path
sys.path.insert(0, "scripts")
from variant_source import absolute_imports, git_show, replaced  # noqa: E402

OUT = Path("build/v41")
BASE = "270cddf"  # v40's last commit

SIGNATURE = ("q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr, cu_q_ptr, seq_lens_ptr, table_ptr,",
             "q_ptr, k_ptr, v_ptr, out_ptr, part_ptr, lse_ptr, flag_ptr, sync_ptr, cu_q_ptr, seq_lens_ptr, table_ptr,")
START = """
    if SPLIT:  # the merge may start once every program has; this call's flag number
        launch_dependents()
        number = gl.load(sync_ptr) + 1"""
IMPORT = "\nfrom stream_merge import launch_dependents, launch_stream_merge, publish, stream_workspace\n"
LAUNCH = ("out, part, lse, cu_seqlens_q, seq_lens, block_table,", "out, part, lse, flags, sync, cu_seqlens_q, seq_lens, "
          "block_table,")
WORKSPACE_OLD = "    part, lse = split_workspace(splits, num_tokens, num_q_heads, head, out)\n"
WORKSPACE_NEW = WORKSPACE_OLD + "    flags, sync = stream_workspace(splits, num_tokens, num_q_heads, head, out.device)\n"
MERGE = ("        launch_merge(part, lse, out)", "        launch_stream_merge(part, lse, flags, sync, out)")


def stream_edits(slots: str, mask: str, empty: str) -> tuple:
    """The edits both kernels take, after their own import and start ones: `slots` names the kernel's partial-row
    indices, `mask` their valid ones, `empty` the lse row an empty segment stores."""
    exit_store = f"            gl.store(lse_ptr + {slots}, {empty}, mask={mask})\n"
    final_store = f"        gl.store(lse_ptr + {slots}, lse, mask={mask})\n"
    return (
        (exit_store + "            return",
         exit_store + f"            publish(flag_ptr + {slots}, number, {mask})\n            return"),
        (final_store, final_store + f"        publish(flag_ptr + {slots}, number, {mask})\n"),
        (WORKSPACE_OLD, WORKSPACE_NEW),
        LAUNCH,
        MERGE,
    )


def keys_rows() -> str:
    text = absolute_imports(git_show(f"{BASE}:pagedattn/ops/unified_keys_rows.py"))
    warps = "    WARPS: gl.constexpr = TILE_N // 16  # each warp's 16 keys of a step are its rows of S^T"
    return replaced(
        text,
        ("\nCHUNK = gl.constexpr(32)", IMPORT + "\nCHUNK = gl.constexpr(32)"),
        SIGNATURE,
        (warps, warps + START),
        *stream_edits("part_cols", "col_ok", 'gl.full([HN], float("-inf"), gl.float32, COLS)'),
    )


def wgmma() -> str:
    text = absolute_imports(git_show(f"{BASE}:pagedattn/ops/verify_wgmma.py"))
    return replaced(
        text,
        ("\nBLOCK_M = gl.constexpr(WGMMA_BLOCK_M)", IMPORT + "\nBLOCK_M = gl.constexpr(WGMMA_BLOCK_M)"),
        SIGNATURE,
        ("    split = gl.program_id(2)\n    DTYPE: gl.constexpr = q_ptr.dtype.element_ty",
         "    split = gl.program_id(2)" + START + "\n    DTYPE: gl.constexpr = q_ptr.dtype.element_ty"),
        *stream_edits("part_rows", "row_ok", 'gl.full([BLOCK_M], float("-inf"), gl.float32, ROWS)'),
    )


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "ukr_stream.py").write_text(keys_rows())
    (OUT / "vw_stream.py").write_text(wgmma())
    print("wrote", OUT / "ukr_stream.py", OUT / "vw_stream.py")
