"""How fast the split merge runs at other launch shapes than `launch_merge`'s (GPU only).

Times `merge_splits_kernel` at column slices 16-256 and 1-8 warps on the partial shapes of BF16
MTP verify (13 splits x 80 tokens x 16 heads, head size 256) and the FP8 single long request (128
splits x 1 and 4 tokens x 16 heads), each right after a kernel that writes the partials, as the
attention kernel does: the time of a CUDA graph of (write + merge) minus that of (write), medians
of 5 rounds of 200 replays. Every output is checked against `launch_merge`'s. Used in perf-notes
v18 item 3 to pick `MERGE_WARPS` (`results/v18/c4-merge-probe.*`).

Usage: PYTHONPATH=. python3 scripts/merge_probe.py OUT.json
"""

import json, statistics, sys
import torch, triton
from pagedattn.ops.common import merge_splits_kernel, launch_merge

def graph_ms(fn, reps=200, rounds=5):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(20): fn()
    res = []
    for _ in range(rounds):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps // 20): g.replay()
        b.record(); torch.cuda.synchronize()
        res.append(a.elapsed_time(b) / reps)
    return statistics.median(res)

rows_out = []
for name, splits, rows in (("mtp bf16 32k", 13, 80), ("long q=1", 128, 1), ("long q=4", 128, 4)):
    heads, head = 16, 256
    src = torch.randn(splits, rows, heads, head, device="cuda")
    part = torch.empty_like(src)
    lse = torch.randn(splits, rows, heads, device="cuda") * 4
    ref = torch.empty(rows, heads, head, device="cuda", dtype=torch.bfloat16)
    part.copy_(src); launch_merge(part, lse, ref)
    write = lambda: part.copy_(src)
    base = graph_ms(write)
    for columns in (256, 128, 64, 32, 16):
        for warps in (1, 2, 4, 8):
            chunk = min(triton.next_power_of_2(splits), max(1, 8192 // columns))
            if columns * chunk < 32 * warps: continue
            out = torch.full_like(ref, float("nan"))
            def merge(out=out, columns=columns, warps=warps, chunk=chunk):
                merge_splits_kernel[(rows, heads, head // columns)](
                    part, lse, out, rows, splits, out.stride(0), out.stride(1), NUM_HEADS=heads, HEAD=head,
                    HEAD_PAD=head, COLUMNS=columns, SPLIT_CHUNK=chunk, num_warps=warps)
            merge(); torch.cuda.synchronize()
            ok = torch.allclose(out.float(), ref.float(), atol=1e-2, rtol=1e-2)
            ms = graph_ms(lambda: (write(), merge())) - base
            rows_out.append({"case": name, "columns": columns, "warps": warps, "chunk": chunk, "merge_us": ms * 1e3, "ok": ok})
            print(f"{name:14s} columns {columns:3d} warps {warps} chunk {chunk:3d}  merge {ms * 1e3:6.2f} us  ok {ok}", flush=True)
json.dump(rows_out, open(sys.argv[1], "w"), indent=1)
