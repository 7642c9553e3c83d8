"""v43: ws_fp8.py's warp-specialized FP8 verify (a producer partition, two consumer partitions on alternate tiles)
against the library's profile for the call (the dispatcher's: the keys-as-rows kernel on these cases).
--check: odd shapes only (a mixed batch of lengths not a multiple of a tile, q of 1-4 tokens, 16q/1kv and 32q/2kv,
a key segment empty for short sequences, tensor scales), each config against float64, NaN-prefilled.
Otherwise: the check, then the FP8 long request at q=4 and FP8 MTP verify (16q/1kv 32,768 / 70,000 keys, 32q/2kv
32,768) timed with `ab_probe.time_unified_case` (alternated graph timing over rotated input sets, min of RUNS rounds).
Configs: (tile_n, stages, fp16 V slots, consumer registers, producer registers, page-table entries read a step
ahead, each consumer converts its own tiles' V into its own fp16 slot instead of the producer, consumer 0 reads q
after the partitions split, so the producer's first copies do not wait for it, consumer 1 hands its O, m and l to
consumer 0 through shared memory, so a program writes one partial, both consumers share one fp16 V slot taken in tile
order, which makes room for a 5th ring stage); compile_ws.py's spill instructions (producer + consumers): ccahqc 30 + 49
(the combine holds both O), sv5 48 + 0, sv5n 7 + 0. Measured and dropped (perf-notes v43): ccah and ccahq (ccahqc
without the combine, and without q read after the split) in calls 5-7; in call 2 (64, 4, 2), (64, 3, 3), (32, 8, 4), (32, 6, 4) with 216 / 72 registers and the
producer converting V; in call 3 the first two with the page table read ahead; in call 5 "cc", ccah without the read
ahead. Calls 2-5 ran this script with those configs (their commits hold them).
--one NAME: the q=4 long request once with config NAME (for ncu).
Usage: ws_ab.py OUT.jsonl RUNS | ws_ab.py --check OUT.jsonl | ws_ab.py --one NAME"""
import json
import sys

import torch

sys.path.insert(0, "scripts")
from ab_probe import record_check, time_unified_case, unified_variant  # noqa: E402
from pagedattn import workloads  # noqa: E402
from pagedattn.device import DeviceInfo  # noqa: E402
from pagedattn.ops.unified_keys_rows import launch_unified_keys_rows  # noqa: E402
from pagedattn.ops.verify_wgmma import launch_verify_wgmma  # noqa: E402
from pagedattn.profiles import select  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402
from ws_fp8 import launch_ws_fp8  # noqa: E402

CONFIGS = {"ccahqc": (64, 4, 2, 224, 56, True, True, True, True, False),
           "sv5": (64, 5, 1, 224, 56, True, True, True, True, True), "sv5n": (64, 5, 1, 224, 56, False, True, True, True, True)}
LABELS = ("B=1 q=4 kv=131072 16q/1kv d256 fp8", "B=20 q=4 kv=32768 16q/1kv d256 fp8",
          "B=20 q=4 kv=70000 16q/1kv d256 fp8", "B=20 q=4 kv=32768 32q/2kv d256 fp8")


def ws_variant(config, splits):
    tile_n, stages, slots, consumer_regs, producer_regs, ahead, converts, q_in_consumer, combine, shared = config

    def call(kw, out):
        launch_ws_fp8(kw["q"], kw["k_cache"], kw["v_cache"], out, kw["cu_seqlens_q"], kw["seq_lens"], kw["block_table"],
                      max_seqlen_q=kw["max_seqlen_q"], softmax_scale=kw["q"].shape[-1] ** -0.5, k_scale=kw["k_scale"],
                      v_scale=kw["v_scale"], tile_n=tile_n, stages=stages, v_slots=slots, splits=splits,
                      consumer_regs=consumer_regs, producer_regs=producer_regs, pages_ahead=ahead,
                      consumer_converts=converts, q_in_consumer=q_in_consumer,
                      combine=combine, shared_v16=shared)
    return call


def ws_splits(shape) -> int:
    """Programs to fill the SMs once (one program per SM), at most 128 splits (256 partials: the merge's one round
    trip)."""
    return max(1, min(128, DeviceInfo.current().num_sms // (len(shape.kv_lens) * shape.num_kv_heads)))


def check(path: str) -> bool:
    shapes = [workloads.UnifiedShape((4, 1, 3, 4), (5003, 37, 700, 64), 16, 1, 256, kv_dtype="fp8"),
              workloads.UnifiedShape((2, 4), (33, 9001), 32, 2, 256, kv_dtype="fp8")]
    failures = []
    with open(path, "w") as f:
        for shape in shapes:
            kwargs = shape.build("cuda", seed=7).kwargs
            kwargs["k_scale"] = torch.tensor(kwargs["k_scale"], device="cuda")
            for name, config in CONFIGS.items():
                for splits in (1, 3, 16):
                    label = f"{shape.query_lens} {shape.kv_lens} {shape.num_q_heads}q/{shape.num_kv_heads}kv " \
                            f"{name} splits={splits}"
                    record_check(f, failures, label, ws_variant(config, splits), kwargs)
                    print(label, "ok" if not failures or failures[-1]["check"] != label else "FAIL", flush=True)
    return not failures


def main(path: str, runs: int) -> None:
    cases = [c for w in ("long-request", "mtp-verify") for c in workloads.get_workload(w).cases if c.label in LABELS]
    with open(path, "w") as f:
        for case in cases:
            base = select.select_profile(case_shape_key(case), DeviceInfo.current()).profile
            launch = launch_unified_keys_rows if base.keys_as_rows else launch_verify_wgmma
            splits = ws_splits(case.shape)
            print(case.label, base.short(), "ws splits", splits, flush=True)
            variants = {"base": unified_variant(launch, base)}
            variants.update({name: ws_variant(config, splits) for name, config in CONFIGS.items()})
            time_unified_case(case, variants, f, runs=runs)


def three_calls(shape, name: str) -> None:
    """Config NAME on one input set of `shape`, called three times (ncu profiles the third launch)."""
    kwargs = shape.build("cuda").kwargs
    out = torch.empty_like(kwargs["q"])
    for _ in range(3):
        ws_variant(CONFIGS[name], ws_splits(shape))(kwargs, out)
    torch.cuda.synchronize()


def one(name: str) -> None:
    three_calls(next(c for c in workloads.get_workload("long-request").cases if c.label == LABELS[0]).shape, name)


if __name__ == "__main__":
    if sys.argv[1] == "--one":
        sys.exit(one(sys.argv[2]))
    if sys.argv[1] == "--check":
        sys.exit(0 if check(sys.argv[2]) else 1)
    main(sys.argv[1], int(sys.argv[2]))
