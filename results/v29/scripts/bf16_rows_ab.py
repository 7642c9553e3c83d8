"""v29: the keys-as-rows kernel for 16-bit pages (build/v29/ukr16.py, which results/v29/scripts/make_variants.py
builds; in the calls it was pagedattn/ops/unified_keys_rows_16bit.py, as on branch wip/bf16-keys-rows), not
wired into the profile layer: its results on varied shapes through its launcher, then the bench's
BF16 MTP cases against the tree's wgmma kernel at the H200 table's profile.
1. checks: NaN-prefilled outputs against float64 (rel-L2 < 1e-2, no NaN), both ring forms (2 stages,
   and 3 with P in the consumed K slot), 1 / 5 / 16 splits, bf16 and fp16, head sizes 256 and 128,
   page sizes 16 / 32 / 64, groups 8 to 32, several query blocks per sequence, NaN bytes past each
   sequence's length, page ids outside the cache, a key ~30 log2 units above the rest in each warp.
2. timing: `scripts/ab_probe.check_and_time` (graph timing, variants alternated, min of 3 rounds)
   on the bench's BF16 MTP cases: the table's wgmma profile against the new kernel at 2 and 3
   stages, at the one-wave split count (one program per SM) and about twice it; the streaming read
   ceiling of the same run.
Call 3 adds build/v29/ukr16_k_ahead.py (K copied a tile ahead of V) at both of its K ring
depths, and `--checks-only-for` to run the checks on some forms only.
Usage: bf16_rows_ab.py OUT.jsonl [--checks-only-for FORM,...] FORM ...   (FORM: st2, st3pk, kahead3, kahead2)"""
import dataclasses, json, sys, time
sys.path.insert(0, "scripts")
sys.path.insert(0, "tests")
sys.path.insert(0, "build/v29")
from ab_probe import record_check, time_unified_case, unified_variant  # noqa: E402
from conftest import plant_one_unified_key_jump, poison_past_lengths  # noqa: E402
from pagedattn import LaunchProfile, workloads  # noqa: E402
from pagedattn.bench import measure_ceilings  # noqa: E402
from ukr16 import launch_unified_keys_rows_16bit  # noqa: E402
from pagedattn.ops.verify_wgmma import launch_verify_wgmma  # noqa: E402
from pagedattn.profiles.tables import previous_profiles  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402
from pagedattn.workloads import UnifiedShape  # noqa: E402
from ukr16_k_ahead import launch_k_ahead  # noqa: E402

out_path, args = sys.argv[1], sys.argv[2:]
checked = None
if args[0] == "--checks-only-for":
    checked, args = args[1].split(","), args[2:]
ROWS = LaunchProfile(64, 64, 1, 8, 2, keys_as_rows=True)
ALL_FORMS = {"st2": (ROWS, False), "st3pk": (dataclasses.replace(ROWS, num_stages=3), True),
             "kahead3": (dataclasses.replace(ROWS, num_stages=3), None), "kahead2": (ROWS, None)}
FORMS = {name: ALL_FORMS[name] for name in args}
CHECKED = {name: FORMS[name] for name in (checked or FORMS)}


def rows_variant(profile, p_in_k_slot):
    """p_in_k_slot None: the K-ahead probe (its K ring depth is the profile's stages)"""
    def call(kw, out):
        if p_in_k_slot is None:
            return launch_k_ahead(kw["q"], kw["k_cache"], kw["v_cache"], out, kw["cu_seqlens_q"], kw["seq_lens"],
                                  kw["block_table"], max_seqlen_q=kw["max_seqlen_q"],
                                  softmax_scale=kw["q"].shape[-1] ** -0.5, k_scale=kw["k_scale"],
                                  v_scale=kw["v_scale"], profile=profile)
        launch_unified_keys_rows_16bit(kw["q"], kw["k_cache"], kw["v_cache"], out, kw["cu_seqlens_q"], kw["seq_lens"],
                                       kw["block_table"], max_seqlen_q=kw["max_seqlen_q"],
                                       softmax_scale=kw["q"].shape[-1] ** -0.5, k_scale=kw["k_scale"],
                                       v_scale=kw["v_scale"], profile=profile, p_in_k_slot=p_in_k_slot)
    return call


# (query lengths, KV lengths, q heads, kv heads, head size, page)
SHAPES = [
    ((4, 4, 4, 4), (2051, 16, 4, 700), 16, 1, 256, 16),
    ((4, 1, 3, 2), (5000, 1, 3, 33), 32, 2, 256, 32),
    ((1, 1, 1), (131, 1, 4000), 16, 1, 256, 64),
    ((1, 8, 2), (1, 300, 1234), 8, 1, 256, 16),
    ((2, 2), (3001, 17), 24, 1, 256, 16),
    ((3, 1), (777, 260), 12, 2, 256, 16),
    ((1, 1, 1, 1), (4097, 65, 1, 2000), 32, 2, 256, 16),
    ((4, 2), (1500, 640), 16, 1, 128, 16),
    ((8, 5, 1), (5000, 300, 1), 16, 1, 256, 16),  # 128 packed rows: two blocks
    ((17, 2, 9), (257, 3000, 40), 8, 1, 256, 16),  # three blocks; a last segment past a block's queries
]
failures, t0 = [], time.time()
with open(out_path, "w") as f:
    def check(label, kwargs, variant):
        record_check(f, failures, label, variant, kwargs)

    for shape in SHAPES:
        q_lens, kv_lens, qh, kvh, head, page = shape
        for dtype in ("bf16", "fp16"):
            kwargs = UnifiedShape(q_lens, kv_lens, qh, kvh, head, page, q_dtype=dtype, kv_dtype=dtype
                                  ).build("cuda", seed=sum(kv_lens)).kwargs
            for form, (prof, pk) in CHECKED.items():
                for splits in (1, 5, 16):
                    check(f"{shape} {dtype} {form} s{splits}", kwargs,
                          rows_variant(dataclasses.replace(prof, num_splits=splits), pk))
    for form, (prof, pk) in CHECKED.items():
        for splits in (1, 3):
            kwargs = UnifiedShape((4, 1, 2), (700, 90, 33), 16, 1, 256, 16, kv_dtype="bf16").build("cuda", seed=61).kwargs
            poison_past_lengths(kwargs)
            check(f"nan-past-lengths {form} s{splits}", kwargs, rows_variant(dataclasses.replace(prof, num_splits=splits), pk))
            kwargs = UnifiedShape((4, 2), (700, 90), 16, 1, 256, 16, kv_dtype="bf16").build("cuda", seed=21).kwargs
            table = kwargs["block_table"].clone()
            table[0, 1], table[0, 20], table[1, 0] = -7, kwargs["k_cache"].shape[0] + 3, 2**30
            check(f"invalid-pages {form} s{splits}", kwargs | {"block_table": table},
                  rows_variant(dataclasses.replace(prof, num_splits=splits), pk))
        for key in (0, 21, 40, 63):
            kwargs = UnifiedShape((4, 2), (700, 450), 16, 1, 256, 16, kv_dtype="bf16").build("cuda", seed=43).kwargs
            plant_one_unified_key_jump(kwargs, 2 * 64 + key)
            check(f"one-key-jump {key} {form}", kwargs, rows_variant(prof, pk))
    print(f"checks: {len(failures)} failed, {time.time() - t0:.0f} s", flush=True)

    ceilings = measure_ceilings("cuda", 1 << 30, 8192)
    print("ceilings", json.dumps(ceilings), flush=True)
    f.write(json.dumps({"ceilings": ceilings}) + "\n")
    for case in workloads.get_workload("mtp-verify").cases:
        if case.shape.kv_dtype != "bf16":
            continue
        prof = previous_profiles(case_shape_key(case), "NVIDIA_H200")[0]
        per_split = len(case.shape.query_lens) * case.shape.num_kv_heads
        one_wave = 132 // per_split
        variants = {f"wgmma/{prof.short()}": unified_variant(launch_verify_wgmma, prof)}
        for form, (rows, pk) in FORMS.items():
            for splits in (one_wave, (2 * 132) // per_split):
                variants[f"rows-{form}/s{splits}"] = rows_variant(dataclasses.replace(rows, num_splits=splits), pk)
        time_unified_case(case, variants, f)
print(f"done {time.time() - t0:.0f} s")
