"""v29 call 6: build/v29/ukr8_columns.py (make_variants.py; FP8 pages; two warpgroups split 64 packed columns and the
head dimensions, 64 keys per step) against the library's FP8 keys-as-rows kernel (ops/unified_keys_rows.py) at
the H200 table's profile.
1. checks through its launcher: NaN-prefilled outputs against float64 (rel-L2 < 1e-2, no NaN), 2 and 3 stages,
   1 / 5 / 16 splits, bf16 and fp16 q, head sizes 256 and 128, pages of 16 / 32 / 64, groups of 8 to 32,
   several query blocks, NaN bytes past the lengths, page ids outside the cache, a key ~30 log2 units above
   the rest in each warp;
2. timing (`scripts/ab_probe.check_and_time`): the FP8 long request at q=4 (64 packed rows) at 128 and 132
   splits and the bench's FP8 MTP cases at 32,768 and 70,000 keys at the wave rule's splits, 2 / 3 / 4 stages.
Usage: fp8_columns_ab.py OUT.jsonl"""
import dataclasses, sys, time
sys.path.insert(0, "scripts")
sys.path.insert(0, "tests")
sys.path.insert(0, "build/v29")
from ab_probe import record_check, time_unified_case, unified_variant  # noqa: E402
from conftest import plant_one_unified_key_jump, poison_past_lengths  # noqa: E402
from pagedattn import LaunchProfile, workloads  # noqa: E402
from pagedattn.ops.unified_keys_rows import launch_unified_keys_rows  # noqa: E402
from pagedattn.profiles.tables import previous_profiles  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402
from pagedattn.workloads import UnifiedShape  # noqa: E402
from ukr8_columns import launch_fp8_columns  # noqa: E402

COLUMNS = LaunchProfile(64, 64, 1, 8, 2, keys_as_rows=True)
# (query lengths, KV lengths, q heads, kv heads, head size, page)
SHAPES = [
    ((4, 4, 4, 4), (2051, 16, 4, 700), 16, 1, 256, 16),
    ((4, 1, 3, 2), (5000, 1, 3, 33), 32, 2, 256, 32),
    ((1, 1, 1), (131, 1, 4000), 16, 1, 256, 64),
    ((1, 8, 2), (1, 300, 1234), 8, 1, 256, 16),
    ((2, 2), (3001, 17), 24, 1, 256, 16),
    ((1, 1, 1, 1), (4097, 65, 1, 2000), 32, 2, 256, 16),
    ((4, 2), (1500, 640), 16, 1, 128, 16),
    ((8, 5, 1), (5000, 300, 1), 16, 1, 256, 16),
    ((17, 2, 9), (257, 3000, 40), 8, 1, 256, 16),
]
failures, t0 = [], time.time()
with open(sys.argv[1], "w") as f:
    def check(label, kwargs, profile):
        record_check(f, failures, label, unified_variant(launch_fp8_columns, profile), kwargs)

    for shape in SHAPES:
        q_lens, kv_lens, qh, kvh, head, page = shape
        for dtype in ("bf16", "fp16"):
            kwargs = UnifiedShape(q_lens, kv_lens, qh, kvh, head, page, q_dtype=dtype, kv_dtype="fp8"
                                  ).build("cuda", seed=sum(kv_lens)).kwargs
            for stages in (2, 3):
                for splits in (1, 5, 16):
                    check(f"{shape} {dtype} st{stages} s{splits}", kwargs,
                          dataclasses.replace(COLUMNS, num_stages=stages, num_splits=splits))
    for splits in (1, 3):
        kwargs = UnifiedShape((4, 1, 2), (700, 90, 33), 16, 1, 256, 16, kv_dtype="fp8").build("cuda", seed=61).kwargs
        poison_past_lengths(kwargs)
        check(f"nan-past-lengths s{splits}", kwargs, dataclasses.replace(COLUMNS, num_splits=splits))
        kwargs = UnifiedShape((4, 2), (700, 90), 16, 1, 256, 16, kv_dtype="fp8").build("cuda", seed=21).kwargs
        table = kwargs["block_table"].clone()
        table[0, 1], table[0, 20], table[1, 0] = -7, kwargs["k_cache"].shape[0] + 3, 2**30
        check(f"invalid-pages s{splits}", kwargs | {"block_table": table}, dataclasses.replace(COLUMNS, num_splits=splits))
    for key in (0, 21, 40, 63):
        kwargs = UnifiedShape((4, 2), (700, 450), 16, 1, 256, 16, kv_dtype="fp8").build("cuda", seed=43).kwargs
        kwargs |= {"k_scale": 1.0, "v_scale": 1.0}
        plant_one_unified_key_jump(kwargs, 2 * 64 + key)
        check(f"one-key-jump {key}", kwargs, COLUMNS)
    print(f"checks: {len(failures)} failed, {time.time() - t0:.0f} s", flush=True)

    for wl, labels in (("long-request", ("q=4 kv=131072 16q/1kv d256 fp8",)),
                       ("mtp-verify", ("kv=32768 16q/1kv d256 fp8", "kv=70000 16q/1kv d256 fp8",
                                       "kv=32768 32q/2kv d256 fp8"))):
        for case in workloads.get_workload(wl).cases:
            if not any(label in case.label for label in labels):
                continue
            prof = previous_profiles(case_shape_key(case), "NVIDIA_H200")[0]
            per_split = len(case.shape.query_lens) * case.shape.num_kv_heads
            split_counts = (128, 132) if wl == "long-request" else (132 // per_split,)
            variants = {f"keysrows/{prof.short()}": unified_variant(launch_unified_keys_rows, prof)}
            for splits in split_counts:
                for stages in (2, 3, 4):
                    variants[f"columns/s{splits}/st{stages}"] = unified_variant(
                        launch_fp8_columns, dataclasses.replace(COLUMNS, num_splits=splits, num_stages=stages))
            time_unified_case(case, variants, f)
print(f"done {time.time() - t0:.0f} s")
