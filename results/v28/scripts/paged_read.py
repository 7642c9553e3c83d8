"""v28 call 4: the read ceiling of a paged cache's own access pattern. A Triton kernel reads each
sequence's K and V pages through its block table (the bench's rotated input sets, shuffled page
order), split into KV segments as the attention kernels split them, and only sums the bytes (the
caches viewed as int32): how fast can the pages of one KV head be read, against the streaming read
of a flat buffer (`bench.measure_ceilings`, same run)? Variants: keys per tile, warps, pipeline
stages, segments per sequence; the best per case is its paged ceiling.
Cases: the FP8 long request (q=1, 16q/1kv, 4 KB pages of one KV head: the unified keys-as-rows
kernel's 0.0267 ms), BF16 MTP 16q/1kv at 32,768 keys (8 KB pages: the wgmma kernel's 0.191 ms), the
BF16 long request 32q/8kv d128 (32 KB pages of all 8 KV heads, 4 KB per head: the Triton kernel).
Call 4 ran this measurement as a plain script; `best_paged_read` was factored out of it, unchanged, for
call 5 (results/v28/scripts/stream_sizes.py).
Usage: paged_read.py OUT.json"""
import functools, json, sys
import torch
import triton
import triton.language as tl
from pagedattn import workloads
from pagedattn.bench import _input_sets, measure_ceilings
from pagedattn.timing import time_calls


@triton.jit
def _paged_read_kernel(k_ptr, v_ptr, table_ptr, seq_lens_ptr, out_ptr, stride_table, stride_block, stride_slot,
                       stride_head, num_splits, PAGE: tl.constexpr, WORDS: tl.constexpr, TILE_N: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    split = tl.program_id(2)
    kv_len = tl.load(seq_lens_ptr + seq)
    tiles = tl.cdiv(kv_len, TILE_N)
    per = tl.cdiv(tiles, num_splits)
    lo = split * per
    hi = tl.minimum(lo + per, tiles)
    acc = tl.zeros([TILE_N, WORDS], tl.int32)
    words = tl.arange(0, WORDS)
    for t in range(lo, hi):
        pos = t * TILE_N + tl.arange(0, TILE_N)
        ok = pos < kv_len
        page = tl.load(table_ptr + seq * stride_table + pos // PAGE, mask=ok, other=0).to(tl.int64)
        offs = page[:, None] * stride_block + (pos % PAGE)[:, None] * stride_slot + kv_head * stride_head + words[None, :]
        acc += tl.load(k_ptr + offs, mask=ok[:, None], other=0) ^ tl.load(v_ptr + offs, mask=ok[:, None], other=0)
    pid = (seq * tl.num_programs(1) + kv_head) * tl.num_programs(2) + split
    tl.store(out_ptr + pid, tl.sum(tl.sum(acc, 1), 0))


def paged_read(kw, out, tile_n, warps, stages, splits):
    k, v = kw["k_cache"].view(torch.int32), kw["v_cache"].view(torch.int32)
    table = kw["block_table"]
    grid = (table.shape[0], k.shape[2], splits)
    _paged_read_kernel[grid](k, v, table, kw["seq_lens"], out, table.stride(0), k.stride(0), k.stride(1), k.stride(2),
                             splits, PAGE=k.shape[1], WORDS=k.shape[3], TILE_N=tile_n, num_warps=warps,
                             num_stages=stages)


CASES = ("B=1 q=1 kv=131072 16q/1kv d256 fp8", "B=20 q=4 kv=32768 16q/1kv d256 bf16",
         "B=1 q=1 kv=131072 32q/8kv d128 bf16")


def best_paged_read(case, stream: float) -> dict:
    """Every variant's time over the case's rotated input sets, and the fastest ("best")."""
    sets = _input_sets(case, "cuda")
    pages_bytes = 2 * int(sets[0].kwargs["seq_lens"].sum()) * case.shape.num_kv_heads * case.shape.head_size * \
        sets[0].kwargs["k_cache"].element_size()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    programs = len(case.shape.kv_lens) * case.shape.num_kv_heads
    rows = []
    for tile_n in (32, 64, 128):
        for warps in (4, 8):
            for stages in (2, 3, 4):
                for per_sm in (1, 2, 4):
                    splits = max(1, per_sm * sms // programs)
                    out = torch.empty(programs * splits, dtype=torch.int32, device="cuda")
                    calls = [functools.partial(paged_read, s.kwargs, out, tile_n, warps, stages, splits) for s in sets]
                    ms = time_calls(calls)
                    rows.append({"tile_n": tile_n, "warps": warps, "stages": stages, "splits": splits, "ms": ms,
                                 "tbps": pages_bytes / ms / 1e9, "of_stream": pages_bytes / ms / 1e9 / stream})
    del sets
    torch.cuda.empty_cache()
    return {"kv_bytes": pages_bytes, "best": min(rows, key=lambda r: r["ms"]), "variants": rows}


if __name__ == "__main__":
    result = {"ceilings": measure_ceilings("cuda", 2 * 2**30, 8192), "cases": {}}
    stream = result["ceilings"]["hbm_read_tbps"]
    print("stream", stream, flush=True)
    for wl in ("long-request", "mtp-verify"):
        for case in workloads.get_workload(wl).cases:
            if case.label in CASES:
                result["cases"][case.label] = best_paged_read(case, stream)
                print(case.label, json.dumps(result["cases"][case.label]["best"]), flush=True)
    json.dump(result, open(sys.argv[1], "w"), indent=1)
