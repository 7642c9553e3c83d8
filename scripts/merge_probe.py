"""How fast the split merge runs at other launch shapes than `launch_merge`'s (GPU only).

Times the merge kernel (`launch_merge_shaped`) at column slices 16-256 and 1-8 warps on the partial shapes of BF16
MTP verify (13 splits x 80 tokens x 16 heads, head size 256) and the FP8 single long request (128
splits x 1 and 4 tokens x 16 heads), each right after a kernel that writes the partials, as the
attention kernel does: the time of a CUDA graph of (write + merge) minus that of (write), medians
of 5 rounds of 200 replays. Every output is checked against `launch_merge`'s. Used in perf-notes
v18 item 3 to pick `MERGE_WARPS` (`results/v18/c4-merge-probe.*`). The merge runs without dropping the
partials' L2 lines (DISCARD, perf-notes v30 item 1): its gain shows in the HBM writes of later kernels.

Usage: PYTHONPATH=. python3 scripts/merge_probe.py OUT.json
"""

import json
import statistics
import sys

import torch
import triton

from pagedattn.ops.common import launch_merge, launch_merge_shaped

# (name, splits, tokens) of the partials, 16 heads of size 256 each
SHAPES = (("mtp bf16 32k", 13, 80), ("long q=1", 128, 1), ("long q=4", 128, 4))
HEADS, HEAD = 16, 256


def graph_ms(fn, reps: int = 200, rounds: int = 5) -> float:
    """Median ms per call of `fn` over `rounds` rounds of `reps` replays of a 20-call CUDA graph."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(20):
            fn()
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps // 20):
            graph.replay()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / reps)
    return statistics.median(times)


def probe_shape(name: str, splits: int, rows: int) -> list[dict]:
    src = torch.randn(splits, rows, HEADS, HEAD, device="cuda")
    part = torch.empty_like(src)
    lse = torch.randn(splits, rows, HEADS, device="cuda") * 4
    ref = torch.empty(rows, HEADS, HEAD, device="cuda", dtype=torch.bfloat16)
    part.copy_(src)
    launch_merge(part, lse, ref)

    def write():
        part.copy_(src)

    base = graph_ms(write)
    found = []
    for columns in (256, 128, 64, 32, 16):
        for warps in (1, 2, 4, 8):
            chunk = min(triton.next_power_of_2(splits), max(1, 8192 // columns))
            if columns * chunk < 32 * warps:
                continue
            out = torch.full_like(ref, float("nan"))

            def merge(out=out, columns=columns, warps=warps, chunk=chunk):
                launch_merge_shaped(part, lse, out, columns, chunk, warps, discard=False)

            merge()
            torch.cuda.synchronize()
            ok = torch.allclose(out.float(), ref.float(), atol=1e-2, rtol=1e-2)
            ms = graph_ms(lambda: (write(), merge())) - base
            found.append({"case": name, "columns": columns, "warps": warps, "chunk": chunk, "merge_us": ms * 1e3,
                          "ok": ok})
            print(f"{name:14s} columns {columns:3d} warps {warps} chunk {chunk:3d}  merge {ms * 1e3:6.2f} us  ok {ok}",
                  flush=True)
    return found


def main() -> None:
    rows = [row for shape in SHAPES for row in probe_shape(*shape)]
    with open(sys.argv[1], "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
