"""v41, offline (no GPU): build/v41's streaming-merge probes (make_variants.py) and stream_merge.py's merge compiled
for sm90 as the H200 table's profiles launch them: registers, stack, shared memory and the KV loop's instruction
count (`compile_report.hot_loop`) per kernel and form, base against stream; and the merge's registers per shape.
Usage: TRITON_INTERPRET=0 PYTHONPATH=.:build/v41:results/v41/scripts python3 results/v41/scripts/offline_stream.py"""
import importlib
import json
import sys

sys.path.insert(0, "scripts")
import compile_report as cr  # noqa: E402
import triton  # noqa: E402
from pagedattn.ops import unified_keys_rows, verify_wgmma  # noqa: E402
from pagedattn.ops.common import merge_shape, whole_lines  # noqa: E402
from pagedattn.profiles.types import LaunchProfile  # noqa: E402
import stream_merge  # noqa: E402

_pointers = cr._pointer_types
cr._pointer_types = lambda *a, **k: {**_pointers(*a, **k), "flag_ptr": "*i32", "sync_ptr": "*i32"}

KEYS_ROWS = {"q=1 long request (m16/n64/s256/w4/st2)": LaunchProfile(16, 64, 256, 4, 2, keys_as_rows=True),
             "q=4 long request (m64/n128/s128/w8/st2)": LaunchProfile(64, 128, 128, 8, 2, keys_as_rows=True)}
WGMMA = {"bf16 MTP (m64/n16/s13/st5/ahead)": LaunchProfile(64, 16, 13, 4, 5, addresses_ahead=True,
                                                            warpgroup_mma=True)}


def report(variant, form, info):
    loop, _ = cr.hot_loop(info["sass"])
    print(json.dumps({"variant": variant, "form": form, "regs": info["regs"], "stack": info["stack"],
                      "smem": info["smem"], "serial": info["serial"], "loop": loop}), flush=True)


def main() -> None:
    for variant, ukr, vw in (("base", unified_keys_rows, verify_wgmma),
                             ("stream", importlib.import_module("ukr_stream"), importlib.import_module("vw_stream"))):
        cr.unified_keys_rows_kernel = ukr.unified_keys_rows_kernel
        cr.verify_wgmma_kernel = vw.verify_wgmma_kernel
        if variant == "base":
            cr._pointer_types = _pointers
        else:
            cr._pointer_types = lambda *a, **k: {**_pointers(*a, **k), "flag_ptr": "*i32", "sync_ptr": "*i32"}
        for form, profile in KEYS_ROWS.items():
            report(variant, form, cr.compile_unified_keys_rows("bf16", 16, 256, 16, profile, True, sass=True))
        for form, profile in WGMMA.items():
            report(variant, form, cr.compile_verify_wgmma("bf16", "bf16", 16, 256, 16, profile, True, sass=True))
    for splits, heads in ((256, 16), (128, 16), (13, 16), (6, 16)):
        columns, chunk, warps = merge_shape(splits, 256)
        sig, const = cr._signature(stream_merge.stream_merge_kernel, {
            "part_ptr": "*fp32", "lse_ptr": "*fp32", "flag_ptr": "*i32", "sync_ptr": "*i32", "out_ptr": "*bf16"},
            set(), set())
        const.update(NUM_HEADS=heads, HEAD=256, HEAD_PAD=256, COLUMNS=columns,
                     SPLIT_PAD=triton.next_power_of_2(splits), DISCARD=whole_lines(columns), WAIT=False)
        info = cr._compile(stream_merge.stream_merge_kernel, sig, const, warps, 1)
        print(json.dumps({"merge splits": splits, "columns": columns, "warps": warps, "regs": info["regs"],
                          "stack": info["stack"], "CCTL": info["CCTL"]}), flush=True)


if __name__ == "__main__":
    main()
