"""The launch-profile dispatcher as pure functions over DeviceInfo: seed rules, the multi-token
verify gate, the sm90 rules written from the H200 table, the analytic default and the split
count recomputed after the rules, the blocklist, tuned tables and the profile types.

Shape keys are derived from meta tensors through the same functions the public API uses, so GQA
ratios are derived from head counts exactly as in a real call. Every test runs with the tuned-table
directory pointed at an empty folder unless it writes its own table.
"""

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
import torch
import triton

from pagedattn import api
from pagedattn.device import KNOWN_DEVICES, DeviceInfo
from pagedattn.profiles import rules, select, tables
from pagedattn.profiles.select import (
    ALL_QUERIES, Selection, choose_splits, default_profile, even_splits, program_slots, select_profile,
    table_profile_for_call, thread_registers, unified_launch_plan, untuned_selection, with_splits,
)
from pagedattn.profiles.types import (
    SHORT_CLASS, VERIFY_MAX_QUERIES, LaunchProfile, ShapeKey, cdiv, next_pow2, query_class,
)

MI300X = KNOWN_DEVICES["AMD_INSTINCT_MI300X"]
MI355X = KNOWN_DEVICES["AMD_INSTINCT_MI355X"]
H200 = KNOWN_DEVICES["NVIDIA_H200"]
REGISTER_BUILDS = Path(__file__).resolve().parent.parent / "results" / "v23" / "triton-registers.jsonl"
TORCH_KV = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp8": torch.float8_e4m3fn}


pytestmark = pytest.mark.usefixtures("no_tuned_tables")


def _meta(*shape, dtype=torch.bfloat16):
    return torch.empty(shape, device="meta", dtype=dtype)


def sparse_key(rows, num_q_heads, num_kv_heads, kv_dtype="bf16", head_size=256, topk=2051) -> ShapeKey:
    return api.sparse_shape_key(
        _meta(rows, num_q_heads, head_size), _meta(64, 16, num_kv_heads, head_size, dtype=TORCH_KV[kv_dtype]),
        _meta(rows, topk, dtype=torch.int32),
    )


def unified_key(batch, q_len, num_q_heads, num_kv_heads, kv_len, kv_dtype="bf16", head_size=256) -> ShapeKey:
    return api.unified_shape_key(
        _meta(batch * q_len, num_q_heads, head_size),
        _meta(64, 16, num_kv_heads, head_size, dtype=TORCH_KV[kv_dtype]),
        _meta(batch, -(-kv_len // 16), dtype=torch.int32), q_len, kv_len,
    )


def amd_stages(profile: LaunchProfile, device: DeviceInfo, key: ShapeKey) -> LaunchProfile:
    """ROCm always pipelines with one stage (64 KiB LDS), splits recomputed for it; other vendors keep
    the default."""
    return with_splits(dataclasses.replace(profile, num_stages=1), key, device) if device.is_rocm else profile


# ----------------------------------------------------------------------------- seed rule walk


def sparse_prefill_fields(arch: str, kv_dtype: str, group: int, programs: int, head_size: int) -> dict:
    """For > 512 programs: the vLLM #62590 combined rule as DESIGN.md tabulates it, and on sm90 the
    H200 table's fields (docs/profiles-h200.md): groups of at most 16 heads on the shared-exchange
    kernel (16-bit pages with 16-key tiles up to 2,048 programs, FP8 with 32-key tiles), except FP8
    groups of at most 8 at head size 128/256 above 2,048 programs, which take the keys-as-rows
    kernel; larger groups on Triton."""
    if arch == "sm90":
        if kv_dtype == "fp8" and group <= 8 and programs > 2048 and head_size in (128, 256):
            return {"block_m": 16, "tile_n": 64, "num_warps": 4, "num_stages": 2, "keys_as_rows": True}
        if group <= 16:
            return {"block_m": 16, "tile_n": 16 if kv_dtype == "bf16" and programs <= 2048 else 32, "num_warps": 2,
                    "num_stages": 2, "shared_exchange": True}
        if kv_dtype == "bf16":
            return {"tile_n": 32, "num_warps": 2, "num_stages": 2, "addresses_ahead": True}
        return {"tile_n": 64, "num_warps": 2, "num_stages": 2}
    if arch == "gfx942":
        tile_n, warps = (32, 2) if kv_dtype == "bf16" and next_pow2(group) >= 16 else (64, 1)
    else:
        tile_n, warps = (64, 1) if arch == "gfx950" else (64, 2)
    return {"tile_n": tile_n, "num_warps": warps}


@pytest.mark.parametrize("head_size", [128, 256])
@pytest.mark.parametrize("programs", [512, 513, 8192])
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
@pytest.mark.parametrize("group", [3, 4, 6, 8, 12, 16, 24, 32])
@pytest.mark.parametrize("device", KNOWN_DEVICES.values(), ids=list(KNOWN_DEVICES))
def test_sparse_seed_walk_follows_the_documented_rule(device, group, kv_dtype, programs, head_size):
    key = sparse_key(programs, group, 1, kv_dtype, head_size)
    assert key.programs == programs and key.group == group
    chosen = select_profile(key, device)
    default = default_profile(key, device)
    if programs > 512:
        fields = sparse_prefill_fields(device.arch, kv_dtype, group, programs, head_size)
        expected = with_splits(dataclasses.replace(amd_stages(default, device, key), **fields), key, device)
    elif device.arch == "sm90" and kv_dtype == "fp8" and group <= 16 and head_size == 256:  # decode on keys-as-rows
        fields = {"block_m": 16, "tile_n": 64, "num_warps": 4, "num_stages": 2, "keys_as_rows": True}
        expected = with_splits(dataclasses.replace(default, **fields), key, device)
    else:
        expected = amd_stages(default, device, key)
    assert chosen.profile == expected
    assert chosen.source == ("default" if expected == default else "rules")
    assert rules.blocked_reason("sparse", device, key, chosen.profile) is None
    assert (chosen.profile.tile_n, chosen.profile.num_warps) != (32, 1) or device.arch != "gfx942"


@pytest.mark.parametrize("rows,kv_heads,prefill_like", [(300, 2, True), (256, 2, False), (513, 1, True)])
def test_sparse_rules_key_on_rows_times_kv_heads(rows, kv_heads, prefill_like):
    key = sparse_key(rows, 12 * kv_heads, kv_heads)
    assert key.programs == rows * kv_heads
    chosen = select_profile(key, MI355X).profile
    assert ((chosen.tile_n, chosen.num_warps) == (64, 1)) == prefill_like


def test_gfx942_bf16_rule_keeps_two_warps_at_tile_32():
    """BLOCK_N=32 with one warp faults on MI300X: the (32, 2) row must never lose its second warp."""
    first = rules.LADDERS["sparse"][0][0]
    assert first.when.archs == ("gfx942",) and first.sets == {"tile_n": 32, "num_warps": 2}


def test_blocked_rule_output_is_never_selected(monkeypatch):
    faulting = rules.Rule(rules.When(archs=("gfx942",), min_programs=512), {"tile_n": 32, "num_warps": 1},
                          source="test")
    monkeypatch.setitem(rules.LADDERS, "sparse", ((faulting,),) + rules.LADDERS["sparse"][1:])
    tables.clear_cache()
    key = sparse_key(8192, 24, 2)
    laddered, sources, _ = rules.apply_ladders("sparse", MI300X, key, default_profile(key, MI300X))
    assert (laddered.tile_n, laddered.num_warps) == (32, 1) and sources[0] == "test"
    chosen = select_profile(key, MI300X)
    assert chosen.source == "default" and chosen.profile == default_profile(key, MI300X)
    assert rules.blocked_reason("sparse", MI300X, key, chosen.profile) is None


def test_blocked_default_gets_other_warps(monkeypatch):
    key = sparse_key(64, 8, 1, head_size=128)
    default = default_profile(key, H200)
    assert (default.tile_n, default.num_warps) == (64, 4)
    extra = rules.Blocked("sparse", rules.When(archs=("sm90",)), {"tile_n": 64, "num_warps": 4}, "test fault")
    monkeypatch.setattr(rules, "BLOCKLIST", rules.BLOCKLIST + (extra,))
    tables.clear_cache()
    chosen = select_profile(key, H200)
    assert chosen.profile == dataclasses.replace(default, num_warps=8)
    assert chosen.source == "default" and "blocklist" in chosen.detail


@pytest.mark.parametrize("kernel", ["sparse", "unified"])
def test_explicit_blocked_profile_raises_only_where_it_faults(kernel):
    key = sparse_key(8192, 12, 1) if kernel == "sparse" else unified_key(8, 4, 16, 1, 4096)
    faulting = LaunchProfile(block_m=64, tile_n=32, num_splits=1, num_warps=1, num_stages=1)
    with pytest.raises(ValueError, match="fault"):
        select_profile(key, MI300X, faulting)
    allowed = select_profile(key, MI355X, faulting)
    assert allowed.source == "explicit" and allowed.profile == faulting


def test_explicit_profile_smaller_than_the_group_raises():
    with pytest.raises(ValueError, match="GQA group"):
        select_profile(sparse_key(64, 24, 1), H200, LaunchProfile(block_m=16, tile_n=64))


# ----------------------------------------------------------------------------- unified verify gate


@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
@pytest.mark.parametrize("batch,kv_len", [(20, 513), (20, 8192), (1, 131072), (64, 131072)])
@pytest.mark.parametrize("q_len", [2, 3, 4])
@pytest.mark.parametrize("hq,hkv", [(16, 1), (32, 2)])
def test_gfx950_multi_token_verify_gate(hq, hkv, q_len, batch, kv_len, kv_dtype):
    key = unified_key(batch, q_len, hq, hkv, kv_len, kv_dtype)
    assert key.group == 16
    chosen = select_profile(key, MI355X)
    p = chosen.profile
    assert (p.block_m, p.tile_n, p.block_q(key.group), p.num_stages) == (32, 32, 2, 1)
    assert 8 <= p.num_splits <= 64
    assert chosen.source == "rules" and "36330" in chosen.detail


@pytest.mark.parametrize("device", [MI355X, MI300X], ids=["gfx950", "gfx942"])
@pytest.mark.parametrize("hq,hkv,q_len,kv_len", [
    (16, 1, 1, 8192),  # decode
    (16, 1, 5, 8192),  # more than 4 draft tokens
    (16, 1, 4, 512),  # short KV
    (8, 1, 4, 8192),  # group 8
    (32, 4, 4, 8192),  # group 8 from a 32q/4kv layout
    (64, 2, 4, 8192),  # group 32
])
def test_verify_gate_does_not_apply_outside_its_shapes(device, hq, hkv, q_len, kv_len):
    key = unified_key(20, q_len, hq, hkv, kv_len)
    chosen = select_profile(key, device)
    assert chosen.profile == amd_stages(default_profile(key, device), device, key)
    assert "36330" not in chosen.detail


def test_verify_gate_applies_only_on_gfx950():
    key = unified_key(20, 4, 16, 1, 8192)
    for device in (MI300X, KNOWN_DEVICES["AMD_INSTINCT_MI250X"]):
        assert select_profile(key, device).profile == amd_stages(default_profile(key, device), device, key)
    assert "36330" not in select_profile(key, H200).detail


# ----------------------------------------------------------------------------- sm90 rules (H200 table)


@pytest.mark.parametrize("key,fields", [
    (unified_key(64, 1, 32, 8, 32768, head_size=128), {"tile_n": 128, "num_stages": 2}),  # decode, 4 rows
    (unified_key(64, 4, 32, 8, 4096, head_size=128), {"tile_n": 128, "num_stages": 2}),  # verify, 16 rows
    (unified_key(20, 4, 16, 1, 32768), {"tile_n": 16, "num_warps": 4, "num_stages": 4, "warpgroup_mma": True,
                                        "addresses_ahead": True}),
    (dataclasses.replace(unified_key(20, 4, 16, 1, 32768), score_mods=True),
     {"tile_n": 16, "num_warps": 4, "num_stages": 4, "addresses_ahead": True}),
    (unified_key(20, 1, 16, 1, 32768), {"block_m": 64, "tile_n": 16, "num_warps": 4, "num_stages": 4,
                                        "warpgroup_mma": True, "addresses_ahead": True}),  # 16 of 64 rows used
    (unified_key(20, 4, 32, 2, 70000, "fp8"), {"tile_n": 128, "num_warps": 8, "num_stages": 2, "keys_as_rows": True}),
    (unified_key(1, 1, 16, 1, 131072, "fp8"), {"tile_n": 64, "num_warps": 4, "num_stages": 2, "keys_as_rows": True}),
    (unified_key(64, 1, 16, 1, 4096, "fp8"), {"tile_n": 128, "num_warps": 8, "num_stages": 2, "keys_as_rows": True}),
    (unified_key(10, 4, 16, 1, 4096, "fp8"), {"tile_n": 16, "num_warps": 4, "num_stages": 4, "warpgroup_mma": True}),
    (unified_key(40, 4, 16, 1, 4096, "fp8"), {"tile_n": 128, "num_warps": 8, "num_stages": 2, "keys_as_rows": True}),
    (dataclasses.replace(unified_key(20, 4, 32, 2, 70000, "fp8"), score_mods=True),
     {"tile_n": 32, "num_warps": 4, "num_stages": 4, "addresses_ahead": True}),
    (unified_key(4, 8192, 32, 8, 8192, head_size=128), {"addresses_ahead": True}),  # prefill
], ids=["decode-d128", "verify-d128", "verify-d256-bf16", "verify-d256-bf16-softcap", "decode-d256-bf16", "verify-d256-fp8",
        "decode-d256-fp8-long", "decode-d256-fp8-4096-keys", "verify-d256-fp8-310-keys-per-sm",
        "verify-d256-fp8-1241-keys-per-sm", "verify-d256-fp8-softcap", "prefill"])
def test_sm90_rules_set_the_h200_table_fields(key, fields):
    chosen = select_profile(key, H200)
    assert chosen.source == "rules" and "H200" in chosen.detail
    expected = with_splits(dataclasses.replace(default_profile(key, H200), **fields), key, H200)
    assert chosen.profile == expected
    assert chosen == untuned_selection(key, H200)


@pytest.mark.parametrize("key", [
    unified_key(64, 1, 32, 1, 32768, head_size=128),  # decode with 32 rows per program
    unified_key(64, 8, 16, 1, 32768, head_size=128),  # verify with 128 rows per program
    unified_key(20, 4, 16, 1, 32768, head_size=64),  # verify at head size 64
])
def test_sm90_rules_stay_off_shapes_the_h200_table_has_no_bucket_for(key):
    chosen = select_profile(key, H200)
    assert (chosen.source, chosen.profile) == ("default", default_profile(key, H200))


@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_laddered_profile_gets_its_own_split_count(kv_dtype):
    """w8 -> w4 fits two verify programs per SM instead of one (the wgmma kernel, FP8 pages at up to
    384 keys per SM: 88 KB of shared memory, two per SM), so the split count doubles: 13 splits for
    20 sequences of one KV head, the most that fit one wave of 264 slots (the H200 table's count for
    BF16 MTP); the default with 8 warps takes 6 (120 of 132 slots)."""
    key = unified_key(20, 4, 16, 1, 32768 if kv_dtype == "bf16" else 2048, kv_dtype)
    default, chosen = default_profile(key, H200), select_profile(key, H200).profile
    assert (default.num_warps, default.num_splits) == (8, 6)
    assert (chosen.num_warps, chosen.num_splits) == (4, 13)


def test_single_long_request_may_split_past_64():
    key = unified_key(1, 1, 16, 1, 131072, "fp8")
    assert 64 < select_profile(key, H200).profile.num_splits <= 256


def test_a_rule_cannot_set_the_split_count():
    with pytest.raises(ValueError, match="splits_range"):
        rules.Rule(rules.When(), {"num_splits": 8})


# ----------------------------------------------------------------------------- analytic default


@pytest.mark.parametrize("hq,hkv,q_len,head_size,block_m", [
    (16, 1, 4, 256, 64),  # verify: 4 tokens x 16 heads packed
    (4, 1, 1, 128, 16),  # decode: at least 16 rows
    (4, 1, 4, 128, 16),
    (8, 1, 8, 128, 64),
    (32, 1, 8, 128, 128),  # capped at 128
    (3, 1, 3, 64, 16),
    (32, 1, 1, 128, 32),
    (24, 2, 1, 256, 16),  # group 12
    (4, 1, 8192, 128, 128),  # prefill: 128 rows at head size <= 128
    (4, 1, 8192, 256, 64),  # prefill: 64 rows above
    (128, 1, 100, 256, 128),  # never fewer rows than the group
])
def test_default_block_m_packs_group_and_queries(hq, hkv, q_len, head_size, block_m):
    key = unified_key(4, q_len, hq, hkv, 8192, head_size=head_size)
    p = default_profile(key, H200)
    assert p.block_m == block_m and p.block_m >= key.group
    if key.group * q_len <= 128:
        assert p.block_q(key.group) >= q_len, "a decode/verify sequence fits one program"


@pytest.mark.parametrize("group,block_m", [(3, 16), (6, 16), (12, 16), (16, 16), (24, 32), (32, 32)])
def test_default_sparse_block_m_is_the_padded_group(group, block_m):
    assert default_profile(sparse_key(8192, group, 1), H200).block_m == block_m


def test_default_splits_shrink_as_programs_grow():
    splits = [default_profile(unified_key(b, 1, 32, 8, 131072, head_size=128), H200).num_splits for b in (1, 4, 16, 64)]
    assert splits[0] > splits[1] > splits[2] > splits[3] == 1
    assert splits[0] >= 16


def test_default_splits_grow_with_kv_length():
    splits = [default_profile(unified_key(1, 1, 32, 8, kv, head_size=128), H200).num_splits
              for kv in (256, 1024, 8192, 131072)]
    assert splits == sorted(splits) and splits[0] == 1 and splits[-1] > splits[1] > 1


@pytest.mark.parametrize("kv_len,splits", [(256, 1), (300, 1), (512, 2), (1024, 4)])
def test_default_never_leaves_fewer_than_4_tiles_per_split(kv_len, splits):
    p = default_profile(unified_key(1, 1, 32, 8, kv_len, head_size=128), H200)
    assert p.tile_n == 64 and p.num_splits == splits
    assert -(-kv_len // p.tile_n) >= 4 * p.num_splits or p.num_splits == 1


@pytest.mark.parametrize("key", [
    unified_key(4, 8192, 32, 8, 8192, head_size=128),
    unified_key(4, 8192, 32, 8, 8192, head_size=256),
    sparse_key(8192, 24, 2),
], ids=["prefill-d128", "prefill-d256", "sparse-8192-rows"])
def test_default_large_calls_use_one_split(key):
    assert default_profile(key, H200).num_splits == 1


def test_default_sparse_decode_splits_the_index_list():
    p = default_profile(sparse_key(64, 12, 1), H200)
    assert 1 < p.num_splits <= 16 and -(-2051 // p.tile_n) >= 4 * p.num_splits


@pytest.mark.parametrize("programs,tiles,slots,max_splits,expected", [
    (100, 1000, 132, 64, 5),  # 500 of 528 slots = 94.7 %: first within 85 % of the best (100 %)
    (106, 1000, 132, 64, 1),  # >= 80 % of the slots already busy
    (1, 12, 132, 64, 3),  # 12 tiles allow at most 3 splits of 4 tiles
    (1, 1000, 132, 16, 16),  # one wave (14 is the first within 85 %): the most that fit, at most 16
    (8, 1024, 264, 256, 32),  # one wave: 33 fit, but 33 segments of 32 tiles leave one empty
    (20, 2048, 264, 256, 13),  # one wave: 13 x 20 of 264 slots (85 % would stop at 12)
])
def test_choose_splits_wave_efficiency(programs, tiles, slots, max_splits, expected):
    assert choose_splits(programs, tiles, slots, max_splits) == expected


@pytest.mark.parametrize("tiles,splits,expected", [(16, 14, 8), (16, 16, 16), (1024, 33, 32), (2048, 218, 205),
                                                   (7, 3, 3), (0, 5, 1)])
def test_even_splits_counts_the_segments_that_get_tiles(tiles, splits, expected):
    assert even_splits(tiles, splits) == expected


def _programs_per_sm_by_registers(registers: int, num_warps: int) -> int:
    return min(4, 65536 // (32 * num_warps * cdiv(registers, 8) * 8))


def test_thread_registers_against_sm90_builds_of_the_triton_kernels():
    """The register estimate against 424 offline sm90 builds (Triton 3.6) of ops/unified.py and
    ops/sparse.py: the programs per SM it allows must be right on at least 90 % of the forms and one
    too many on at most 4 % (too many programs per SM means a split count past one wave)."""
    builds = [json.loads(line) for line in REGISTER_BUILDS.read_text().splitlines()]
    right = too_many = 0
    for b in builds:
        profile = LaunchProfile(block_m=b["m"], tile_n=b["n"], num_splits=2, num_warps=b["w"], num_stages=b["st"])
        key = ShapeKey(b["kernel"], b["kv"], b["head"], min(b["m"], 16 if b["head"] == 256 else 4), "verify",
                       1, 1, 1, 1, 4096)
        est = _programs_per_sm_by_registers(thread_registers(profile, key), b["w"])
        built = _programs_per_sm_by_registers(b["regs"], b["w"])
        right += est == built
        too_many += est > built
    assert len(builds) == 424 and right >= 0.9 * len(builds) and too_many <= 0.04 * len(builds)


def test_the_triton_kernels_single_long_request_splits_fill_one_wave():
    """16 rows, 128-key tiles at head size 128 build at 255 registers (232 estimated): two programs per SM, so the
    single long request's 8 KV heads get 32 splits (256 of 264 slots; 33 would leave a segment
    empty), the H200 table's count, not the 43 of three per SM (perf-notes v23 item 1: 43 splits
    took 1.23x the time of 29; v24 item 3: 32 take 0.96x the time of 29)."""
    key = unified_key(1, 1, 32, 8, 131072, head_size=128)
    chosen = untuned_selection(key, H200).profile
    assert (chosen.block_m, chosen.tile_n, chosen.num_warps, chosen.kernel) == (16, 128, 4, "triton")
    assert program_slots(chosen, key, H200) == 2 * H200.num_sms
    assert chosen.num_splits == 32


@pytest.mark.parametrize("tile_n,block_m,stages", [(t, m, st) for t, top in select.UNIFIED_KEYS_ROWS_MAX_M.items()
                                                   for m in (16, 32, 64) if m <= top for st in (2, 3, 4)])
def test_keys_rows_register_cap_keeps_the_programs_shared_memory_allows(tile_n, block_m, stages):
    """The unified keys-as-rows builds' register cap (ptxas' maxnreg): where set, as many programs as
    shared memory lets share an SM fit its 64K registers at the cap, and one more would not; the
    16-row one-warpgroup form at 2 stages (three programs) is the one capped, at 168 (perf-notes v37
    item 1: it built at 174, two programs' worth, once its tile addressing no longer used the tile's
    index); elsewhere shared memory already holds the programs to what 255 registers allow."""
    profile = LaunchProfile(block_m, tile_n, 2, select.UNIFIED_KEYS_ROWS_FORMS[tile_n], stages, keys_as_rows=True)
    cap = select.keys_rows_register_cap(profile, 256, H200)
    by_smem = min(select.MAX_PROGRAMS_PER_SM, H200.smem_per_block // select.unified_keys_rows_smem(profile, 256))
    threads = 32 * profile.num_warps
    assert (cap is not None) == ((tile_n, block_m, stages) == (64, 16, 2))
    if cap is not None:
        assert cap == 168 and cap % 8 == 0 and by_smem == 3
        assert by_smem * threads * cap <= 65536 < by_smem * threads * (cap + 8)
    else:
        assert by_smem * threads * 256 <= 65536


# ----------------------------------------------------------------------------- tuned tables


@pytest.fixture
def table_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(tables, "TABLE_DIR", tmp_path)
    tables.clear_cache()
    return tmp_path


def write_table(directory, device: DeviceInfo, entries, triton_version=None, kernel_hash=None) -> None:
    meta = {
        "device": device.name,
        "triton": triton_version or triton.__version__,
        "kernel_hash": kernel_hash or {k: tables.kernel_hash(k) for k in ("unified", "sparse")},
    }
    body = {"meta": meta, "entries": [{"key": k.bucket(), "profile": p.to_dict(), "speedup": 1.5} for k, p in entries]}
    (directory / f"{device.name}.json").write_text(json.dumps(body))
    tables.clear_cache()


TUNED = LaunchProfile(block_m=16, tile_n=16, num_splits=1, num_warps=1, num_stages=4)
OTHER = LaunchProfile(block_m=32, tile_n=128, num_splits=3, num_warps=8, num_stages=2)


def test_selection_order_explicit_table_rules_default(table_dir):
    tuned_key = sparse_key(8192, 12, 1)
    write_table(table_dir, H200, [(tuned_key, TUNED)])
    explicit = LaunchProfile(block_m=16, tile_n=32, num_splits=2)
    assert select_profile(tuned_key, H200, explicit).source == "explicit"
    assert select_profile(tuned_key, H200, explicit).profile == explicit
    by_table = select_profile(tuned_key, H200)
    assert (by_table.source, by_table.profile) == ("table", TUNED)
    other_group = sparse_key(8192, 3, 1)  # categorical mismatch: no table entry, > 512 programs
    assert select_profile(other_group, H200).source == "rules"
    small = sparse_key(64, 3, 1)  # <= 512 programs on CUDA: no rule applies
    assert select_profile(small, H200).source == "default"


def test_a_choice_is_remembered_until_clear_cache(table_dir):
    tuned_key = unified_key(64, 1, 32, 8, 1024, head_size=128)
    near = unified_key(48, 1, 32, 8, 3000, head_size=128)
    write_table(table_dir, H200, [(tuned_key, TUNED)])
    first = select_profile(near, H200)
    assert first.source == "table" and select_profile(near, H200) is first
    write_table(table_dir, H200, [(tuned_key, OTHER)])  # clears the cache, as the tuner does
    second = select_profile(near, H200)
    assert second.source == "table"
    assert dataclasses.replace(second.profile, num_splits=OTHER.num_splits) == OTHER  # splits fitted to the call


def test_table_lookup_takes_the_nearest_bucket(table_dir):
    write_table(table_dir, H200, [
        (unified_key(64, 1, 32, 8, 1024, head_size=128), TUNED),
        (unified_key(64, 1, 32, 8, 65536, head_size=128), OTHER),
    ])
    near = {kv: select_profile(unified_key(64, 1, 32, 8, kv, head_size=128), H200) for kv in (512, 4096, 16384, 131072)}
    assert [near[kv].profile for kv in (512, 4096)] == [TUNED, TUNED]
    assert [near[kv].profile for kv in (16384, 131072)] == [OTHER, OTHER]
    assert all(s.source == "table" for s in near.values())
    assert select_profile(unified_key(16, 1, 32, 8, 4096, head_size=128), H200).profile == TUNED  # 4x fewer seqs


SPLIT_WGMMA = LaunchProfile(block_m=64, tile_n=16, num_splits=13, num_warps=4, num_stages=5, addresses_ahead=True,
                            warpgroup_mma=True)
SPLIT_KEYS_ROWS = LaunchProfile(block_m=64, tile_n=128, num_splits=6, num_warps=8, num_stages=2, keys_as_rows=True)


def test_table_profile_keeps_the_tuned_programs_on_a_near_bucket(table_dir):
    """A splitting profile tuned at B=20, q=4 (one 64-row query block per sequence) serves nearby
    calls with its split count scaled to keep the programs it was tuned with: 8 draft tokens take
    two query blocks per sequence, so half the splits; half the sequences, twice the splits."""
    bf16, fp8 = unified_key(20, 4, 16, 1, 32768), unified_key(20, 4, 16, 1, 32768, kv_dtype="fp8")
    write_table(table_dir, H200, [(bf16, SPLIT_WGMMA), (fp8, SPLIT_KEYS_ROWS)])
    exact = select_profile(bf16, H200)
    assert (exact.source, exact.profile) == ("table", SPLIT_WGMMA) and "splits" not in exact.detail
    cases = {  # call -> the split count it runs at (13 x 20 sequences / its sequences x query blocks)
        unified_key(20, 8, 16, 1, 32768): 6,  # round(6.5), two 64-row blocks per sequence
        unified_key(20, 5, 16, 1, 8192): 6,
        unified_key(10, 4, 16, 1, 32768): 26,
        unified_key(16, 4, 16, 1, 32768): 16,
        unified_key(40, 4, 16, 1, 32768): 6,
        unified_key(20, 8, 16, 1, 32768, kv_dtype="fp8"): 3,  # keys-as-rows: 6 x 20 / 40
        unified_key(10, 4, 16, 1, 32768, kv_dtype="fp8"): 12,
    }
    for key, splits in cases.items():
        chosen = select_profile(key, H200)
        tuned = SPLIT_KEYS_ROWS if key.kv_dtype == "fp8" else SPLIT_WGMMA
        assert chosen.source == "table"
        assert chosen.profile == LaunchProfile.from_dict(tuned.to_dict() | {"num_splits": splits})
        assert f"splits {tuned.num_splits} -> {splits} for this call's programs" in chosen.detail


def test_a_near_call_across_a_rule_kernel_boundary_takes_the_rules(table_dir):
    """The FP8 MTP bucket at 8,192 keys runs keys-as-rows, as the rules give it; 10 sequences over
    2,048 keys (155 keys per SM) lie below the rules' keys-as-rows boundary, so the rules' wgmma
    profile serves them; 40 sequences over 4,096 keys lie above it and keep the bucket's profile with
    its splits scaled. A bucket whose tuned kernel the rules do not give it keeps serving its
    neighbours: the rules' boundary was not confirmed there."""
    bucket = unified_key(20, 4, 16, 1, 8192, kv_dtype="fp8")
    write_table(table_dir, H200, [(bucket, SPLIT_KEYS_ROWS)])
    small, large = unified_key(10, 4, 16, 1, 2048, kv_dtype="fp8"), unified_key(40, 4, 16, 1, 4096, kv_dtype="fp8")
    across = select_profile(small, H200)
    assert (across.source, across.profile) == ("rules", untuned_selection(small, H200).profile)
    assert across.profile.kernel == "wgmma" and "runs keysrows, the rules give this call wgmma" in across.detail
    kept = select_profile(large, H200)
    assert (kept.source, kept.profile) == ("table", dataclasses.replace(SPLIT_KEYS_ROWS, num_splits=3))
    triton_tuned = LaunchProfile(block_m=64, tile_n=32, num_splits=6, num_warps=4, num_stages=3)
    write_table(table_dir, H200, [(bucket, triton_tuned)])
    assert select_profile(small, H200).source == "table"
    assert select_profile(bucket, H200).profile == triton_tuned


def test_a_near_call_in_more_query_blocks_takes_the_rules_wider_blocks(table_dir):
    """The 4-query GQA verify bucket runs 16-row blocks (4 queries at a group of 4), as the rules give
    it; a call of 8 queries would run them two blocks per sequence, each reading the keys again,
    where the rules give it 32 rows: the rules serve it. A call of 4 queries at another batch size
    keeps the bucket's profile; so does a call of 8 near a bucket whose blocks hold 8, and one of 8
    near the BF16 MTP bucket, whose rules keep its 64-row wgmma blocks (4 queries at a group of 16)."""
    bucket = unified_key(64, 4, 32, 8, 4096, head_size=128)
    sixteen = LaunchProfile.from_short("m16/n128/s1/w4/st2")
    write_table(table_dir, H200, [(bucket, sixteen), (unified_key(20, 4, 16, 1, 32768), SPLIT_WGMMA)])
    eight = unified_key(64, 8, 32, 8, 4096, head_size=128)
    across = select_profile(eight, H200)
    assert (across.source, across.profile) == ("rules", untuned_selection(eight, H200).profile)
    assert across.profile.block_q(4) == 8 and "packs 4 queries per block, the rules 8" in across.detail
    assert select_profile(unified_key(32, 4, 32, 8, 8192, head_size=128), H200).profile == sixteen
    thirty_two = LaunchProfile.from_short("m32/n128/s1/w4/st2")
    write_table(table_dir, H200, [(bucket, thirty_two), (unified_key(20, 4, 16, 1, 32768), SPLIT_WGMMA)])
    assert select_profile(eight, H200) == Selection(thirty_two, "table", f"bucket {bucket.bucket()}")
    mtp_eight = select_profile(unified_key(20, 8, 16, 1, 32768), H200)
    assert mtp_eight.source == "table" and mtp_eight.profile.warpgroup_mma


def test_a_near_call_whose_scaled_splits_fill_the_slots_badly_takes_the_wave_rule(table_dir):
    """32q/2kv FP8 MTP tuned at B=20 with 3 splits (120 programs, one per SM); at B=40 the scaled
    count, round(1.5) = 2, runs 160 programs in two waves of 132: the wave rule's 3 splits instead
    (240 programs, 91 % of two waves). At B=10 the scaled 6 splits keep the bucket's 120 programs."""
    bucket = unified_key(20, 4, 32, 2, 32768, kv_dtype="fp8")
    three = dataclasses.replace(SPLIT_KEYS_ROWS, num_splits=3)
    write_table(table_dir, H200, [(bucket, three)])
    wide = unified_key(40, 4, 32, 2, 32768, kv_dtype="fp8")
    assert table_profile_for_call(three, bucket, wide, H200) == with_splits(three, wide, H200)
    assert select_profile(wide, H200).profile.num_splits == 3
    narrow = unified_key(10, 4, 32, 2, 32768, kv_dtype="fp8")
    assert select_profile(narrow, H200).profile == dataclasses.replace(three, num_splits=6)


def test_table_profile_for_call_caps_and_keeps_unsplit_profiles():
    tuned = unified_key(2, 1, 16, 1, 131072, kv_dtype="fp8")
    many = LaunchProfile(block_m=16, tile_n=64, num_splits=200, num_warps=4, num_stages=2, keys_as_rows=True)
    assert table_profile_for_call(many, tuned, unified_key(1, 1, 16, 1, 131072, kv_dtype="fp8"), H200).num_splits == 256
    few_tiles = unified_key(2, 1, 16, 1, 1024, kv_dtype="fp8")  # 16 tiles of 64 keys
    assert table_profile_for_call(many, tuned, few_tiles, H200).num_splits == 16
    assert table_profile_for_call(TUNED, unified_key(64, 1, 32, 8, 4096), unified_key(8, 1, 32, 8, 4096), H200) == TUNED


def test_table_ignores_far_buckets_and_other_categories(table_dir):
    write_table(table_dir, H200, [(unified_key(64, 1, 32, 8, 1024, head_size=128), TUNED)])
    far = unified_key(64, 1, 32, 8, 1024 * 2**7, head_size=128)  # log2 distance 7 > 6
    assert select_profile(far, H200) == untuned_selection(far, H200)
    for key in (
        unified_key(64, 1, 32, 4, 1024, head_size=128),  # group 8
        unified_key(64, 1, 32, 8, 1024, head_size=64),  # head size
        unified_key(64, 1, 32, 8, 1024, kv_dtype="fp8", head_size=128),  # KV dtype
        unified_key(64, 2, 32, 8, 1024, head_size=128),  # verify, not decode
    ):
        assert select_profile(key, H200).source != "table"
    assert select_profile(unified_key(64, 1, 32, 8, 1024, head_size=128), MI300X).source != "table"  # other device


def test_table_from_another_triton_is_ignored_with_a_warning(table_dir):
    key = sparse_key(8192, 12, 1)
    write_table(table_dir, H200, [(key, TUNED)], triton_version="0.0.1")
    with pytest.warns(UserWarning, match="Triton 0.0.1"):
        chosen = select_profile(key, H200)
    assert chosen.source == "rules"


def test_table_entries_of_a_changed_kernel_are_ignored_with_a_warning(table_dir):
    sparse, unified = sparse_key(8192, 12, 1), unified_key(64, 1, 32, 8, 4096, head_size=128)
    hashes = {"unified": "0123456789abcdef", "sparse": tables.kernel_hash("sparse")}
    write_table(table_dir, H200, [(sparse, TUNED), (unified, OTHER)], kernel_hash=hashes)
    with pytest.warns(UserWarning, match="unified entries .* kernel source changed"):
        assert select_profile(unified, H200).source != "table"
    assert select_profile(sparse, H200).profile == TUNED


def test_table_entry_that_does_not_fit_the_group_is_skipped(table_dir):
    key = sparse_key(8192, 24, 1)  # group 24 needs block_m >= 24
    write_table(table_dir, H200, [(key, TUNED)])
    chosen = select_profile(key, H200)
    assert chosen.source == "rules" and chosen.profile.block_m == 32


def test_blocked_table_entry_is_skipped(table_dir):
    key = sparse_key(8192, 12, 1)
    write_table(table_dir, MI300X, [(key, LaunchProfile(block_m=16, tile_n=32, num_warps=1, num_stages=1))])
    chosen = select_profile(key, MI300X)
    assert chosen.source == "rules" and (chosen.profile.tile_n, chosen.profile.num_warps) == (32, 2)


# ----------------------------------------------------------------------------- types


@pytest.mark.parametrize("fields,name", [
    (dict(block_m=8), "block_m"),
    (dict(block_m=24), "block_m"),
    (dict(tile_n=0), "tile_n"),
    (dict(tile_n=48), "tile_n"),
    (dict(num_splits=0), "num_splits"),
    (dict(num_warps=3), "num_warps"),
    (dict(num_warps=32), "num_warps"),
    (dict(num_stages=0), "num_stages"),
    (dict(num_stages=7), "num_stages"),
])
def test_launch_profile_rejects_invalid_fields(fields, name):
    with pytest.raises(ValueError, match=f"LaunchProfile.{name}"):
        LaunchProfile(**({"block_m": 16, "tile_n": 16} | fields))


def test_launch_profile_limits_and_round_trip():
    p = LaunchProfile(block_m=128, tile_n=16, num_splits=64, num_warps=16, num_stages=6, kv_major=True)
    assert LaunchProfile.from_dict(p.to_dict() | {"unknown": 1}) == p
    assert p.short() == "m128/n16/s64/w16/st6/kvmajor"
    assert LaunchProfile(block_m=32, tile_n=16).block_q(16) == 2
    assert LaunchProfile(block_m=16, tile_n=16).block_q(24) == 1
    # the Gluon unified grids' query blocks per sequence: 8 draft tokens x 16 heads in 64-row blocks
    assert [LaunchProfile(block_m=64, tile_n=16).query_blocks(16, q) for q in (1, 4, 5, 8)] == [1, 1, 2, 2]
    assert LaunchProfile(block_m=16, tile_n=64).query_blocks(24, 3) == 3


@pytest.mark.parametrize("flags", [(False, False, False, False, False), (True, False, False, False, False),
                                   (False, True, False, False, False), (True, True, False, False, False),
                                   (False, False, True, False, False), (False, False, False, True, False),
                                   (False, False, False, False, True)])
def test_launch_profile_int_list_round_trip(flags):
    """The custom ops carry a profile as a list of ints: every field, the flags back as bools (a
    flag that came back as 1 would compile the kernels a second time under another constexpr)."""
    p = LaunchProfile(64, 32, 12, 4, 4, *flags)
    back = LaunchProfile.from_ints(p.to_ints())
    flag_names = ("kv_major", "addresses_ahead", "warpgroup_mma", "shared_exchange", "keys_as_rows")
    assert back == p and [type(getattr(back, k)) for k in flag_names] == [bool] * 5
    assert len(p.to_ints()) == len(p.to_dict())
    with pytest.raises(ValueError, match="10 fields"):
        LaunchProfile.from_ints(p.to_ints()[:-1])


@pytest.mark.parametrize("max_seqlen_q,expected", [
    (0, "decode"), (1, "decode"), (2, "verify"), (4, "verify"), (8, "verify"), (9, "prefill"), (8192, "prefill"),
])
def test_query_class_boundaries(max_seqlen_q, expected):
    assert query_class(max_seqlen_q) == expected


def test_shape_key_programs():
    assert sparse_key(300, 24, 2).programs == 600
    assert unified_key(20, 4, 32, 2, 8192).programs == 40
    key = unified_key(20, 4, 32, 2, 8192)
    assert (key.group, key.num_tokens, key.kv_len, key.query_class) == (16, 80, 8192, "verify")


def test_table_without_a_source_hash_is_ignored_with_a_warning(table_dir):
    key = sparse_key(8192, 12, 1)
    write_table(table_dir, H200, [(key, TUNED)], kernel_hash={"unified": tables.kernel_hash("unified")})
    with pytest.warns(UserWarning, match="records no source hash"):
        assert select_profile(key, H200).source == "rules"


def test_table_matches_kv_head_count_when_the_group_is_equal(table_dir):
    """16q/1kv and 32q/2kv share group 16 but are different buckets (the H200 table has both)."""
    one, two = unified_key(20, 4, 16, 1, 32768), unified_key(20, 4, 32, 2, 32768)
    write_table(table_dir, H200, [(one, TUNED), (two, OTHER)])
    assert select_profile(one, H200).profile == TUNED
    assert select_profile(two, H200).profile == OTHER


def test_profile_short_form_round_trips_and_rejects_other_text():
    for prof in (LaunchProfile(64, 32, 12, 4, 3), LaunchProfile(16, 128, 1, 2, 6, kv_major=True)):
        assert LaunchProfile.from_short(prof.short()) == prof
    assert LaunchProfile.from_short("m64/n32/s12/w4/st3") == LaunchProfile(64, 32, 12, 4, 3)
    for bad in ("m64/n32/s12/w4", "n64/m32/s12/w4/st3", "m64/n32/s12/w4/st3/sideways", "m64/n32/s12/w4/stx"):
        with pytest.raises(ValueError, match="not a profile"):
            LaunchProfile.from_short(bad)


@pytest.mark.parametrize("profile,short,abbreviated", [
    (LaunchProfile(64, 16, 13, 4, 4, warpgroup_mma=True), "m64/n16/s13/w4/st4/rowmajor/wgmma", "m64/n16/s13/w4/st4/wgmma"),
    (LaunchProfile(64, 16, 13, 4, 5, addresses_ahead=True, warpgroup_mma=True),
     "m64/n16/s13/w4/st5/rowmajor/ahead/wgmma", "m64/n16/s13/w4/st5/ahead/wgmma"),
    (LaunchProfile(16, 32, 3, 2, 2, shared_exchange=True), "m16/n32/s3/w2/st2/rowmajor/exchange",
     "m16/n32/s3/w2/st2/exchange"),
    (LaunchProfile(16, 64, 3, 4, 3, keys_as_rows=True), "m16/n64/s3/w4/st3/rowmajor/keysrows",
     "m16/n64/s3/w4/st3/keysrows"),
], ids=["wgmma", "wgmma-ahead", "exchange", "keysrows"])
def test_gluon_kernel_profiles_round_trip_as_text_and_ints(profile, short, abbreviated):
    """Each Gluon kernel's flag survives the short form (with and without the default `rowmajor`)
    and the custom ops' int list."""
    assert profile.short() == short
    assert LaunchProfile.from_short(short) == profile
    assert LaunchProfile.from_short(abbreviated) == profile
    assert LaunchProfile.from_ints(profile.to_ints()) == profile


def test_kernel_hash_follows_the_code_not_its_docstrings(tmp_path, monkeypatch):
    """A docstring or comment edit must not throw away a tuned table; any code edit must."""
    ops = tmp_path / "ops"
    shutil.copytree(Path(tables.__file__).resolve().parent.parent / "ops", ops)
    monkeypatch.setattr(tables, "_OPS_DIR", ops)

    def fresh_hash(kernel):
        tables.kernel_hash.cache_clear()
        return tables.kernel_hash(kernel)

    before = {k: fresh_hash(k) for k in ("unified", "sparse")}
    source = (ops / "common.py").read_text()
    (ops / "common.py").write_text(source.replace('"""Triton helpers shared', '"""Reworded: Triton helpers shared', 1)
                                   .replace("def load_scale(scale_ptr, scale_value, IS_TENSOR: tl.constexpr):\n",
                                            "def load_scale(scale_ptr, scale_value, IS_TENSOR: tl.constexpr):\n"
                                            '    """A new docstring."""  # and a comment\n', 1))
    assert {k: fresh_hash(k) for k in ("unified", "sparse")} == before
    (ops / "common.py").write_text(source.replace("RESCALE_SLACK = tl.constexpr(8.0)", "RESCALE_SLACK = tl.constexpr(4.0)"))
    assert fresh_hash("unified") != before["unified"] and fresh_hash("sparse") != before["sparse"]
    (ops / "common.py").write_text(source)
    (ops / "sparse.py").write_text((ops / "sparse.py").read_text() + "\nEXTRA = 1\n")
    assert fresh_hash("unified") == before["unified"] and fresh_hash("sparse") != before["sparse"]
    (ops / "sparse.py").write_text((Path(tables.__file__).resolve().parent.parent / "ops" / "sparse.py").read_text())
    (ops / "sparse_exchange.py").write_text((ops / "sparse_exchange.py").read_text() + "\nEXTRA = 1\n")
    assert fresh_hash("unified") == before["unified"]  # since v25 the unified hash covers no sparse kernel
    (ops / "gluon_common.py").write_text((ops / "gluon_common.py").read_text() + "\nEXTRA = 1\n")
    assert fresh_hash("unified") != before["unified"] and fresh_hash("sparse") != before["sparse"]
    tables.kernel_hash.cache_clear()


SHIPPED_TABLES = sorted((Path(tables.__file__).parent / "tables").glob("*.json"))


def test_the_h200_table_is_shipped():
    assert "NVIDIA_H200" in [path.stem for path in SHIPPED_TABLES]


@pytest.mark.parametrize("path", SHIPPED_TABLES, ids=lambda path: path.stem)
def test_every_shipped_table_was_tuned_on_these_kernel_sources(path):
    """A code edit of a kernel file makes the dispatcher ignore a table's entries of that kernel (the
    rules run instead), so every such edit lands with a re-tune on the GPU (perf-notes §6 item 7):
    each table records the hashes of the sources it was measured on, one per kernel it has entries
    of (a table may tune one kernel only: the other's calls take the rules)."""
    table = json.loads(path.read_text())
    tuned = {entry["key"]["kernel"] for entry in table["entries"]}
    tables.kernel_hash.cache_clear()
    assert tuned and table["meta"]["kernel_hash"] == {k: tables.kernel_hash(k) for k in tuned}
    assert table["meta"]["triton"] == triton.__version__
    assert table["meta"]["device"] == path.stem


def test_code_tokens_are_the_same_on_every_python():
    """The kernel hash must not depend on the interpreter: CI runs Python 3.11, the GPU machine 3.12
    (an `ast.dump`-based hash differed between them and the H200 table was ignored there). The
    expected tokens are spelled out; this test runs on both machines."""
    sample = ('"""Module doc."""\nimport x  # comment\n\n\ndef f(a, b=1.5):\n    """Doc,\n    two lines."""\n\n'
              "    return a + b  # sum\n")
    expected = ["NAME import", "NAME x", "NEWLINE ", "NAME def", "NAME f", "OP (", "NAME a", "OP ,", "NAME b", "OP =",
                "NUMBER 1.5", "OP )", "OP :", "NEWLINE ", "INDENT ", "NAME return", "NAME a", "OP +", "NAME b",
                "NEWLINE ", "DEDENT ", "ENDMARKER "]
    assert tables.code_tokens(sample).split("\n") == expected


# ----------------------------------------------------------------------------- partitioned plan


def mixed_key(num_seqs=68, num_tokens=4720, max_seqlen_q=2048, kv_dtype="bf16", kv_len=16384,
              num_kv_heads=8) -> ShapeKey:
    """The mixed-batch workload's 32q/8kv D=128 shape (or 32q/`num_kv_heads`): 4 prefill chunks, 48 decode and
    16 verify sequences."""
    return api.unified_shape_key(_meta(num_tokens, 32, 128),
                                 _meta(64, 16, num_kv_heads, 128, dtype=TORCH_KV[kv_dtype]),
                                 _meta(num_seqs, 1024, dtype=torch.int32), max_seqlen_q, kv_len)


@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_a_mixed_prefill_batch_runs_its_short_sequences_in_a_second_launch(kv_dtype):
    """At a group of 4 the short rows' 16-row blocks hold a sequence of 8 queries in 2 blocks: the
    chunks, then every sequence of at most 8 queries in one launch, cut into segments of at most
    SHORT_SEGMENT_KEYS keys."""
    key = mixed_key(kv_dtype=kv_dtype)
    long, short = unified_launch_plan(key, H200)
    assert long.selection == select_profile(key, H200)
    assert (long.queries_above, long.queries_upto) == (VERIFY_MAX_QUERIES, ALL_QUERIES)
    assert (short.queries_above, short.queries_upto) == (0, VERIFY_MAX_QUERIES)
    assert short.selection.profile.kernel == "triton" and short.selection.source != "table"
    assert short.selection.profile.num_splits == key.kv_len // select.SHORT_SEGMENT_KEYS  # 16,384 keys: 4 segments
    assert short.selection.profile.block_q(key.group) < long.selection.profile.block_q(key.group)


@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_at_a_group_of_8_the_short_sequences_run_in_two_launches_by_query_count(kv_dtype):
    """The 16-row blocks hold 2 queries at a group of 8: the sequences of at most 4 queries (2 blocks)
    on them, those of 5-8 on the verify rows' 64-row blocks, both cut into segments."""
    key = mixed_key(kv_dtype=kv_dtype, num_kv_heads=4)
    long, short, longer = unified_launch_plan(key, H200)
    assert long.selection == select_profile(key, H200)
    assert (long.queries_above, long.queries_upto) == (VERIFY_MAX_QUERIES, ALL_QUERIES)
    assert (short.queries_above, short.queries_upto) == (0, 4) and short.selection.profile.block_q(key.group) == 2
    assert (longer.queries_above, longer.queries_upto) == (4, VERIFY_MAX_QUERIES)
    assert longer.selection.profile.block_q(key.group) == VERIFY_MAX_QUERIES
    for part in (short, longer):
        assert part.selection.profile.kernel == "triton" and part.selection.source == "rules"
        assert part.selection.profile.num_splits == key.kv_len // select.SHORT_SEGMENT_KEYS
    verify_key = select.short_verify_key(select.short_part_key(key))
    assert verify_key.query_class == "verify" and verify_key.max_seqlen_q == VERIFY_MAX_QUERIES
    assert longer.selection == select.segmented_short(untuned_selection(verify_key, H200), verify_key)


@pytest.mark.parametrize("num_kv_heads,head_size,profile,ranges", [
    (4, 128, "m16/n64/s4/w4/st3/ahead", [(0, 4), (4, 8)]),  # group 8: 2 queries per block, the rest on 64 rows
    (2, 128, "m16/n64/s4/w4/st3/ahead", [(0, 2), (2, 8)]),  # group 16: 1, the rest on 128-row blocks
    (8, 128, "m16/n64/s4/w4/st3/ahead", [(0, 8)]),  # group 4: 8 queries in 2 blocks
    (4, 128, "m32/n64/s4/w4/st3/ahead", [(0, 8)]),  # group 8 on 32 rows: 8 queries in 2 blocks
    (4, 256, "m16/n64/s4/w4/st3", [(0, 8)]),  # the verify selection runs a Gluon kernel
], ids=["group8", "group16", "group4", "group8-32rows", "gluon-verify"])
def test_short_sequences_that_a_short_block_cannot_hold_take_a_launch_of_their_own(num_kv_heads, head_size, profile,
                                                                                  ranges):
    """`short_launches`: one launch where the short launch's blocks hold VERIFY_MAX_QUERIES queries in
    SHORT_BLOCKS_PER_SEQUENCE blocks, or where the verify selection does not run the Triton kernel on
    wider blocks; else the sequences with more queries than those blocks hold run on the verify
    selection's blocks."""
    short_key = short_key_of(32, num_kv_heads, head_size)
    short = Selection(LaunchProfile.from_short(profile), "table")
    plan = select.short_launches(short_key, short, H200)
    assert [(p.queries_above, p.queries_upto) for p in plan] == ranges
    assert plan[0].selection == short
    if len(plan) == 2:
        verify_key = select.short_verify_key(short_key)
        assert plan[1].selection == select.segmented_short(untuned_selection(verify_key, H200), verify_key)
        assert plan[1].selection.profile.block_q(short_key.group) == VERIFY_MAX_QUERIES
        assert plan[1].selection.profile.kernel == "triton"


@pytest.mark.parametrize("key", [
    unified_key(20, 4, 16, 1, 32768), unified_key(64, 1, 32, 8, 4096),  # verify, decode
    mixed_key(num_seqs=1, num_tokens=2048),  # one sequence
    mixed_key(num_seqs=4, num_tokens=32768, max_seqlen_q=8192),  # dense prefill: 4 equal chunks
    mixed_key(num_seqs=3, num_tokens=2 * 2048 + 9),  # two chunks and one of 9 queries at the most
], ids=["verify", "decode", "one-sequence", "dense-prefill", "no-room-for-a-short-one"])
def test_other_calls_run_in_one_launch(key):
    (whole,) = unified_launch_plan(key, H200)
    assert whole.selection == select_profile(key, H200)
    assert (whole.queries_above, whole.queries_upto) == (0, ALL_QUERIES)


def test_a_call_whose_tokens_leave_room_for_a_short_sequence_is_partitioned():
    """Two chunks of 2,048 queries and a third sequence of 8: the tokens allow a short sequence."""
    assert len(unified_launch_plan(mixed_key(num_seqs=3, num_tokens=2 * 2048 + VERIFY_MAX_QUERIES), H200)) == 2


@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_without_a_table_the_plan_is_the_untuned_plan(kv_dtype):
    """With no table the dispatcher's plan is `untuned_launch_plan`'s (what the bench's no-table
    column runs): the first short launch on the untuned profile of the short-part key cut into segments
    of at most SHORT_SEGMENT_KEYS keys, at a group of 4 and of 8."""
    for key, launches in ((mixed_key(kv_dtype=kv_dtype), 2), (mixed_key(kv_dtype=kv_dtype, num_kv_heads=4), 3)):
        plan = select.untuned_launch_plan(key, H200)
        assert plan == unified_launch_plan(key, H200) and len(plan) == launches
        short_key = select.short_part_key(key)
        assert plan[1].selection == select.segmented_short(select.untuned_selection(short_key, H200), short_key)


def short_key_of(num_q_heads, num_kv_heads, head_size, kv_dtype="bf16") -> ShapeKey:
    """The short-part key of a mixed batch of 68 sequences and 4,720 tokens over 16,384 keys."""
    return select.short_part_key(api.unified_shape_key(
        _meta(4720, num_q_heads, head_size), _meta(64, 16, num_kv_heads, head_size, dtype=TORCH_KV[kv_dtype]),
        _meta(68, 1024, dtype=torch.int32), 2048, 16384))


def test_the_short_part_key_is_a_verify_key_of_its_own_class():
    key = mixed_key()
    short_key = select.short_part_key(key)
    verify = unified_key(key.num_seqs, VERIFY_MAX_QUERIES, 32, 8, key.kv_len, head_size=128)
    assert short_key.query_class == SHORT_CLASS and verify.query_class == "verify"
    assert short_key.bucket() == verify.bucket() | {"query_class": SHORT_CLASS}
    assert rules.When(query_classes=("verify",)).matches(H200, short_key)
    assert not rules.When(query_classes=(SHORT_CLASS,)).matches(H200, verify)


@pytest.mark.parametrize("key,fields", [
    (select.short_part_key(mixed_key()), "m16/n64/s1/w4/st3/ahead"),
    (select.short_part_key(mixed_key(kv_dtype="fp8")), "m16/n128/s1/w4/st3"),
    (unified_key(64, 8, 32, 8, 4096, head_size=128), "m32/n64/s1/w4/st3/ahead"),
    (unified_key(16, 8, 32, 8, 16384, head_size=128, kv_dtype="fp8"), "m32/n64/s1/w4/st3/ahead"),
    (unified_key(32, 4, 32, 4, 8192, head_size=128), "m32/n64/s1/w4/st3/ahead"),  # group 8: 32 rows
    (unified_key(64, 4, 32, 8, 4096, head_size=128), "m16/n128/s1/w4/st2"),  # 16 rows
    (unified_key(32, 8, 32, 4, 8192, head_size=128), "m64/n64/s1/w4/st3/ahead"),  # group 8: 64 rows
    (unified_key(16, 8, 64, 4, 8192, head_size=128), "m128/n64/s1/w8/st3"),  # 128 rows: the analytic default
    (short_key_of(32, 4, 128), "m16/n64/s1/w4/st3/ahead"),  # group 8: 2 queries per block
    (short_key_of(32, 8, 64, "fp8"), "m16/n128/s1/w4/st3"),  # head size 64
    (short_key_of(64, 4, 128), "m128/n64/s1/w8/st3"),  # group 16: the analytic default
    (short_key_of(32, 8, 256), "m64/n16/s1/w4/st4/ahead/wgmma"),  # head size 256: the verify rows (one launch)
], ids=["short-bf16", "short-fp8", "verify8-bf16", "verify8-fp8", "verify4-group8", "verify4-16rows",
        "verify8-group8-64rows", "verify8-group16-128rows", "short-group8", "short-d64", "short-group16",
        "short-d256"])
def test_sm90_rules_for_short_launches_and_verify_of_17_to_64_rows(key, fields):
    """At head size 128 (perf-notes v35 items 1-2): verify of 17-64 packed rows on the default's blocks
    with 64-key tiles 3 deep and the page table read ahead; a mixed batch's short launch at head size 64
    or 128 and a group of at most 8 on 16-row blocks with the H200 table's tuned forms for it."""
    chosen = untuned_selection(key, H200)
    assert chosen.source == ("rules" if "ahead" in fields or "n128" in fields else "default")
    assert dataclasses.replace(chosen.profile, num_splits=1) == LaunchProfile.from_short(fields)
    assert untuned_selection(key, KNOWN_DEVICES["NVIDIA_A100_SXM4_80GB"]).profile.block_m == \
        default_profile(key, KNOWN_DEVICES["NVIDIA_A100_SXM4_80GB"]).block_m


def test_verify_calls_and_short_launches_do_not_share_tuned_entries(table_dir):
    """The table's entry for a mixed batch's short launch (measured on decode-heavy sequences) serves
    short launches only; a verify call of 8 queries near it takes the rules (v35 item 1: the short
    launch's FP8 profile took 1.6x the rules' time on such calls), and a short launch near a verify
    bucket does not take that bucket's."""
    short_key = select.short_part_key(mixed_key(kv_dtype="fp8"))
    write_table(table_dir, H200, [(short_key, TUNED)])
    assert select_profile(short_key, H200).profile == TUNED
    verify = unified_key(64, 8, 32, 8, 4096, head_size=128, kv_dtype="fp8")
    assert select_profile(verify, H200) == untuned_selection(verify, H200)
    write_table(table_dir, H200, [(dataclasses.replace(short_key, query_class="verify"), TUNED)])
    assert select_profile(short_key, H200) == untuned_selection(short_key, H200)


def test_an_explicit_profile_runs_in_one_launch():
    profile = LaunchProfile(128, 64, 1, num_warps=8)
    (whole,) = unified_launch_plan(mixed_key(), H200, profile)
    assert whole.selection.profile == profile and whole.queries_upto == ALL_QUERIES


@pytest.mark.parametrize("which,profile", [
    ("long", "m64/n16/s1/w4/st4/wgmma"), ("short", "m64/n16/s1/w4/st4/wgmma"), ("short", "m128/n64/s1/w8/st3"),
], ids=["long-gluon", "short-gluon", "short-as-wide"])
def test_no_second_launch_the_kernel_cannot_take(monkeypatch, which, profile):
    """The second launch needs the Triton kernel (the Gluon kernels take no query range) and
    narrower blocks than the first's."""
    key, real = mixed_key(), select_profile

    def forced(k, device, explicit=None):
        chosen = real(k, device, explicit)
        return Selection(LaunchProfile.from_short(profile), "test") if (k == key) == (which == "long") else chosen

    monkeypatch.setattr(select, "select_profile", forced)
    (whole,) = select.partitioned_plan(key, H200, forced(key, H200))
    assert whole.queries_upto == ALL_QUERIES


@pytest.mark.parametrize("source", ["table", "rules", "default"])
def test_a_split_short_launch_runs_from_any_source(source):
    key = mixed_key()
    chosen = Selection(LaunchProfile.from_short("m128/n64/s1/w8/st3/ahead"), "table")
    short = Selection(LaunchProfile.from_short("m16/n128/s4/w4/st3/ahead"), source)
    short_plan = select.short_launches(select.short_part_key(key), short, H200)
    assert [p.selection for p in select.partition(key, chosen, short_plan)] == [chosen, short]


@pytest.mark.parametrize("source,splits,kv_len,expected", [
    ("table", 1, 31104, 1),  # a tuned short launch keeps its split, one pass included
    ("default", 1, 31104, 8),  # 486 tiles of 64 keys: 8 segments of 61 tiles (3,904 keys)
    ("rules", 1, 4096, 1),  # one segment
    ("default", 12, 31104, 12),  # the wave rule's finer split
    ("default", 1, 2_097_152, 256),  # 512 segments of 4,096 keys, capped at the kernel's most splits
], ids=["table", "segments", "one-segment", "wave-rule-finer", "capped"])
def test_an_untuned_short_launch_is_cut_into_segments_of_at_most_4096_keys(source, splits, kv_len, expected):
    short_key = select.short_part_key(mixed_key(kv_len=kv_len))
    short = Selection(LaunchProfile(32, 64, splits), source, "why")
    segmented = select.segmented_short(short, short_key)
    assert segmented.profile == LaunchProfile(32, 64, expected) and segmented.source == source
    assert segmented.detail == ("why" if expected == splits else f"why; {expected} segments of at most 4096 keys (short launch)")
