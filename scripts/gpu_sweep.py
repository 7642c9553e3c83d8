"""Explore launch profiles on the GPU: check each against the float64 reference, time it, write JSON lines.

An exploration tool for docs/perf-notes.md (the tuner, `pagedattn tune`, is what produces tables):
a fixed list of hand-picked profile families per workload case, so that one device call shows
which structural choices (packing, orientation, tile, warps, stages, splits) matter.

    PYTHONPATH=. python3 scripts/gpu_sweep.py OUT.jsonl [--only SUBSTRING]

Compiling ~150 kernel variants serially takes minutes, so a run first warms Triton's on-disk cache
from many processes at once (`--compile-only --case I --shard K/N`: each launches its share of the
variants once, untimed) and then times everything from one process, which finds them compiled:

    for i in 0..7, k in 0..1: python3 scripts/gpu_sweep.py /dev/null --compile-only --case $i --shard $k/2 &
    wait; python3 scripts/gpu_sweep.py OUT.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time

import torch

import pagedattn
from pagedattn import LaunchProfile, reference
from pagedattn.api import choose_sparse_profile, choose_unified_profile, has_score_mods
from pagedattn.timing import time_calls
from pagedattn.workloads import SparseShape, UnifiedShape


def grid(**axes) -> list[LaunchProfile]:
    names = list(axes)
    return [LaunchProfile(**dict(zip(names, values))) for values in itertools.product(*axes.values())]


def mtp(kv_len: int, kv_dtype: str, heads=(16, 1)) -> UnifiedShape:
    return UnifiedShape((4,) * 20, (kv_len,) * 20, heads[0], heads[1], 256, 16, kv_dtype=kv_dtype)


def decode(kv_len: int, q: int = 1) -> UnifiedShape:
    return UnifiedShape((q,) * 64, (kv_len,) * 64, 32, 8, 128, 16)


def sparse(rows: int, heads, kv_dtype: str) -> SparseShape:
    return SparseShape(2, 16384, rows // 2, heads[0], heads[1], 256, kv_dtype=kv_dtype)


MTP_PROFILES = (
    grid(block_m=[64], tile_n=[32, 64], num_splits=[8, 16, 32], num_warps=[4, 8], num_stages=[2, 3, 4])
    + grid(block_m=[64], tile_n=[32, 64], num_splits=[16, 32], num_warps=[8], num_stages=[2, 3], kv_major=[True])
    + grid(block_m=[32], tile_n=[32, 64], num_splits=[16, 32], num_warps=[4, 8], num_stages=[3])
    + grid(block_m=[16], tile_n=[64], num_splits=[16, 32], num_warps=[4], num_stages=[3])
)
DECODE_PROFILES = (
    grid(block_m=[16], tile_n=[64, 128], num_splits=[1, 2, 4], num_warps=[4], num_stages=[2, 3, 4],
         kv_major=[False, True])
    + grid(block_m=[16], tile_n=[128], num_splits=[1, 2], num_warps=[8], num_stages=[3], kv_major=[False, True])
)
SPARSE_PROFILES = grid(block_m=[16], tile_n=[32, 64, 128], num_splits=[1], num_warps=[4, 8], num_stages=[2, 3, 4],
                       kv_major=[False, True])

CASES = [
    ("mtp fp8 kv32768 16q/1kv", mtp(32768, "fp8"), MTP_PROFILES),
    ("mtp bf16 kv32768 16q/1kv", mtp(32768, "bf16"), MTP_PROFILES),
    ("mtp fp8 kv70000 16q/1kv", mtp(70000, "fp8"), MTP_PROFILES),
    ("decode bf16 kv32768", decode(32768), DECODE_PROFILES),
    ("decode bf16 kv4096", decode(4096), DECODE_PROFILES),
    ("sparse tp1 bf16 rows8192", sparse(8192, (24, 2), "bf16"), SPARSE_PROFILES),
    ("sparse tp1 fp8 rows8192", sparse(8192, (24, 2), "fp8"), SPARSE_PROFILES),
    ("sparse tp8 fp8 rows8192", sparse(8192, (3, 1), "fp8"), SPARSE_PROFILES),
]


def compile_case(shape, profiles: list[LaunchProfile]) -> None:
    kwargs = shape.build("cuda", seed=7).kwargs
    fn = pagedattn.unified_attention if shape.kernel == "unified" else pagedattn.sparse_attention
    for profile in profiles:
        try:
            fn(**kwargs, profile=profile)
        except Exception as exc:  # reported again, with its case, by the timing pass
            print(f"# compile {profile.short()}: {type(exc).__name__}", file=sys.stderr)
    torch.cuda.synchronize()


def run_case(name: str, shape, profiles: list[LaunchProfile], sink) -> None:
    inputs = shape.build("cuda", seed=7)
    kwargs = inputs.kwargs
    fn = pagedattn.unified_attention if shape.kernel == "unified" else pagedattn.sparse_attention
    ref = getattr(reference, f"{shape.kernel}_attention")(**kwargs)
    if shape.kernel == "unified":
        chosen = choose_unified_profile(kwargs["q"], kwargs["k_cache"], kwargs["block_table"], kwargs["max_seqlen_q"],
                                        kwargs["max_seqlen_k"], score_mods=has_score_mods(**kwargs))
    else:
        chosen = choose_sparse_profile(kwargs["q"], kwargs["k_cache"], kwargs["indices"])
    for profile in [chosen.profile, *profiles]:
        record = {"case": name, "profile": profile.to_dict(), "short": profile.short(),
                  "dispatcher": profile is chosen.profile, "bytes": inputs.bytes_moved, "flops": inputs.flops}
        try:
            out = torch.full_like(kwargs["q"], float("nan"))
            fn(**kwargs, out=out, profile=profile)
            torch.cuda.synchronize()
            record["rel_l2"] = reference.rel_l2(out, ref)
            record["ms"] = time_calls([lambda: fn(**kwargs, out=out, profile=profile)], warmup_ms=10, rep_ms=40)
            record["tb_s"] = inputs.bytes_moved / record["ms"] / 1e9
        except Exception as exc:  # a profile that fails to compile or run is data, not a crash
            record["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        sink(record)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--only", default="")
    parser.add_argument("--compile-only", action="store_true")
    parser.add_argument("--case", type=int)
    parser.add_argument("--shard", default="0/1")
    args = parser.parse_args()
    if args.compile_only:
        name, shape, profiles = CASES[args.case]
        k, n = map(int, args.shard.split("/"))
        compile_case(shape, profiles[k::n])
        return 0
    records = []
    with open(args.out, "w") as f:
        def sink(rec):
            records.append(rec)
            f.write(json.dumps(rec) + "\n")
            f.flush()

        for name, shape, profiles in CASES:
            if args.only in name:
                t0 = time.time()
                run_case(name, shape, profiles, sink)
                print(f"# {name}: {time.time() - t0:.0f}s", file=sys.stderr, flush=True)
    for name in dict.fromkeys(r["case"] for r in records):
        rows = sorted((r for r in records if r["case"] == name and "ms" in r), key=lambda r: r["ms"])
        disp = next((r for r in records if r["case"] == name and r["dispatcher"]), {})
        print(f"\n{name}: dispatcher {disp.get('short')} {disp.get('ms', float('nan')):.4f} ms")
        for r in rows[:5]:
            print(f"  {r['short']:36s} {r['ms']:.4f} ms {r['tb_s']:.2f} TB/s rel {r['rel_l2']:.1e}")
        errors = [r for r in records if r["case"] == name and "error" in r]
        if errors:
            print(f"  {len(errors)} errors, e.g. {errors[0]['short']}: {errors[0]['error'][:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
