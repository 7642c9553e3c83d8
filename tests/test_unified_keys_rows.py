"""The unified keys-as-rows kernel (ops/unified_keys_rows.py, profile flag `keys_as_rows` on a unified call).

Where the profile layer sends a call and why it refuses one are pure functions, tested here on the
CPU. The kernel is written in Gluon, which Triton's interpreter does not run: its sm90 build is
checked offline in tests/test_compile.py and its results by the GPU tests below (marked `gpu`:
skipped on machines without a CUDA GPU, and on GPUs other than sm90).
"""

import dataclasses
import sys
from pathlib import Path

import pytest
import torch

import pagedattn
from pagedattn import LaunchProfile, reference
from pagedattn.device import INTERPRETER, KNOWN_DEVICES
from pagedattn.profiles import select
from pagedattn.profiles.types import ShapeKey
from pagedattn.tune import as_keys_as_rows, case_shape_key, sweep_candidates
from pagedattn.workloads import UnifiedShape
from conftest import (
    assert_close_to_reference, check_refused_off_hopper, check_shape_refusal, check_unified_graph_replay, nan_like,
    check_nan_bytes_past_lengths, check_pages_past_the_table, plant_one_unified_key_jump, plant_rising_scores,
)

H200 = KNOWN_DEVICES["NVIDIA_H200"]
H100 = KNOWN_DEVICES["NVIDIA_H100_80GB_HBM3"]
A100 = KNOWN_DEVICES["NVIDIA_A100_SXM4_80GB"]
KEYS_ROWS = LaunchProfile(64, 128, 1, 8, 2, keys_as_rows=True)
ONE_WARPGROUP = LaunchProfile(16, 64, 1, 4, 2, keys_as_rows=True)  # 64 keys per step, up to 32 packed rows
MTP = ShapeKey("unified", "fp8", 256, 16, "verify", 20, 4, 80, 1, 32768)  # B=20, 4 draft tokens, 16q/1kv
LONG = ShapeKey("unified", "fp8", 256, 16, "decode", 1, 1, 1, 1, 131072)  # one long request, one token


pytestmark = pytest.mark.usefixtures("no_tuned_tables")


# ----------------------------------------------------------------------------- selection (CPU)


@pytest.mark.parametrize("profile_change,key_change,needle", [
    ({"num_warps": 4}, {}, "two warpgroups"),
    ({"tile_n": 64}, {}, "two warpgroups"),
    ({"block_m": 128}, {}, "block_m 16 to 64"),
    ({"tile_n": 64, "num_warps": 4}, {}, "block_m 16 to 32"),  # 64 packed rows on one warpgroup
    ({"tile_n": 32, "num_warps": 2}, {}, "tile_n=64 with 4 warps"),
    ({"kv_major": True}, {}, "kv_major"),
    ({"addresses_ahead": True}, {}, "addresses_ahead"),
    ({"num_stages": 1}, {}, "num_stages >= 2"),
    ({}, {"kv_dtype": "bf16"}, "FP8 pages only"),
    ({}, {"head_size": 128}, "head size 256"),
    ({}, {"group": 80, "max_seqlen_q": 1}, "smaller than the GQA group"),
    ({}, {"score_mods": True}, "softcap"),
    ({}, {"aligned_cache": False}, "16-byte pieces"),
])
def test_every_reason_the_unified_keys_rows_kernel_refuses_a_call(profile_change, key_change, needle):
    check_shape_refusal(dataclasses.replace(KEYS_ROWS, **profile_change), dataclasses.replace(MTP, **key_change),
                        needle, H200)
    assert select.shape_problem(KEYS_ROWS, MTP) is None  # the unchanged pair is fine
    assert select.shape_problem(dataclasses.replace(KEYS_ROWS, block_m=16, num_splits=256, num_stages=3), LONG) is None
    assert select.shape_problem(dataclasses.replace(ONE_WARPGROUP, num_splits=256), LONG) is None
    # more queries than a block holds: several blocks per sequence (4 blocks of 1 token, 2 of 2, 2 of 4)
    for profile, key in ((dataclasses.replace(KEYS_ROWS, block_m=16), MTP),
                         (dataclasses.replace(ONE_WARPGROUP, block_m=32), MTP),
                         (KEYS_ROWS, dataclasses.replace(MTP, max_seqlen_q=8, num_tokens=160))):
        assert select.shape_problem(profile, key) is None


BATCH_DECODE = dataclasses.replace(LONG, num_seqs=64, num_tokens=64, kv_len=4096)  # 64 sequences, one token each


@pytest.mark.parametrize("device", [H200, H100], ids=["H200", "H100"])
@pytest.mark.parametrize("key,keys_as_rows", [
    (MTP, True),  # MTP verify, 64 packed rows
    (dataclasses.replace(MTP, num_kv_heads=2), True),  # 32q/2kv
    (dataclasses.replace(MTP, group=8, max_seqlen_q=8, num_tokens=160), True),
    (dataclasses.replace(MTP, kv_len=8192), True),
    (dataclasses.replace(MTP, kv_len=4096), True),  # 620 keys per SM: above the rules' 384 (v22 item 3)
    (dataclasses.replace(MTP, kv_len=2048), False),  # 310 keys per SM: the wgmma kernel (v16 item 9, v22 item 3)
    (dataclasses.replace(MTP, num_seqs=40, num_tokens=160, kv_len=2048), True),  # 40 sequences: 620 per SM
    (LONG, True),  # the single long request, one token
    (BATCH_DECODE, True),  # decode above 2,048 keys
    (dataclasses.replace(BATCH_DECODE, kv_len=32768), True),
    (dataclasses.replace(BATCH_DECODE, kv_len=32768, group=32), True),  # 32 packed rows: the 128-key form
    (dataclasses.replace(BATCH_DECODE, kv_len=2048), True),  # 993 keys per SM: the 128-key form (v23 item 5)
    (dataclasses.replace(BATCH_DECODE, num_seqs=8, num_tokens=8, kv_len=1024), True),  # 62 per SM: 64-key form
    (dataclasses.replace(BATCH_DECODE, kv_len=256), True),  # 124 keys per SM: the 64-key form
    (dataclasses.replace(BATCH_DECODE, kv_len=128), False),  # one tile or less: the Triton kernel
    (dataclasses.replace(MTP, max_seqlen_q=5, num_tokens=100), True),  # 80 packed rows: two blocks of 64
    (dataclasses.replace(MTP, max_seqlen_q=8, num_tokens=160, kv_len=8192), True),  # 128 rows (v20 item 1)
    (dataclasses.replace(MTP, max_seqlen_q=8, num_tokens=160, kv_len=2048), True),  # 4 % less than wgmma
    (dataclasses.replace(MTP, max_seqlen_q=8, num_tokens=160, kv_len=1024), False),  # wgmma 4 % faster there
    (dataclasses.replace(MTP, max_seqlen_q=8, num_tokens=160, group=32), False),  # 256 rows: not measured
    (dataclasses.replace(MTP, kv_dtype="bf16"), False),
    (dataclasses.replace(LONG, head_size=128), False),
    (dataclasses.replace(LONG, score_mods=True), False),
], ids=["mtp", "mtp-2kv", "group8-q8", "mtp-8192", "mtp-4096", "mtp-2048", "mtp-40-seqs-2048", "long", "batch-decode",
        "batch-decode-32768", "group32-decode-32768", "decode-2048", "decode-8-seqs-1024", "decode-256", "decode-128",
        "80-rows", "128-rows", "128-rows-2048", "128-rows-1024", "256-rows", "bf16", "d128",
        "softcap"])
def test_sm90_without_a_table_runs_long_fp8_decode_and_verify_at_head_256_on_it(device, key, keys_as_rows):
    chosen = select.untuned_selection(key, device)
    assert chosen.profile.keys_as_rows == keys_as_rows
    assert select.shape_problem(chosen.profile, key) is None
    if keys_as_rows:  # decode of up to 16 packed rows above 8,192 keys (v19 item 1) or at up to 384 keys per SM
        # (v23 item 5): the one-warpgroup form
        keys_per_sm = key.num_seqs * key.num_kv_heads * key.kv_len / device.num_sms
        one_warpgroup = key.query_class == "decode" and key.group <= 16 and (key.kv_len > 8192 or keys_per_sm <= 384)
        form = (64, 4, 2) if one_warpgroup else (128, 8, 2)
        assert (chosen.profile.tile_n, chosen.profile.num_warps, chosen.profile.num_stages) == form
        assert chosen.profile.block_m == min(64, max(16, 1 << (key.group * key.max_seqlen_q - 1).bit_length()))


@pytest.mark.parametrize("device,needle", [(INTERPRETER, "interpreter"), (A100, "sm90")])
def test_unified_keys_rows_is_refused_off_hopper(device, needle):
    check_refused_off_hopper(KEYS_ROWS, MTP, device, needle, H100)


@pytest.mark.parametrize("tile_n,block_m,stages,per_sm", [
    (128, 64, 2, 1), (128, 64, 3, 0), (128, 16, 3, 1), (128, 32, 3, 1), (128, 16, 4, 0),
    (64, 16, 2, 3), (64, 32, 2, 2), (64, 16, 3, 2), (64, 16, 4, 1), (64, 32, 4, 1), (64, 16, 6, 1),
])
def test_unified_keys_rows_shared_memory_bounds_its_ring(tile_n, block_m, stages, per_sm):
    """q's two e4m3 tiles, a tile_n-key K/V ring per stage and P^T on the H200's 227 KB per block: the
    128-key form runs 2 stages at 64 packed rows, 3 at 16 or 32, one program per SM either way; the
    64-key form (one warpgroup, 74 KB at 16 rows and 2 stages) three programs per SM at 16 rows, two at
    32 (per_sm 0: does not fit)."""
    profile = LaunchProfile(block_m, tile_n, 1, tile_n // 16, stages, keys_as_rows=True)
    key = MTP if block_m == 64 else dataclasses.replace(MTP, max_seqlen_q=block_m // 16, num_tokens=20 * block_m // 16)
    assert (select.unfit_reason(profile, key, H200) is None) == (per_sm > 0)
    if per_sm:
        assert select.program_slots(profile, key, H200) == per_sm * H200.num_sms


def test_tuner_moves_fp8_unified_calls_to_keys_as_rows_with_its_fixed_fields():
    start = LaunchProfile(64, 16, 13, 4, 4, warpgroup_mma=True)
    moved = [v for v in sweep_candidates(start, "keys_as_rows", MTP, H200) if v.keys_as_rows]
    assert as_keys_as_rows(start, MTP) in moved
    assert all(select.unfit_reason(v, MTP, H200) is None for v in moved)
    expected = dataclasses.replace(KEYS_ROWS, num_splits=start.num_splits)
    assert as_keys_as_rows(start, MTP) == expected
    long_start = LaunchProfile(16, 64, 256, 4, 3)  # a 64-key tile and 16 packed rows: the one-warpgroup form
    assert as_keys_as_rows(long_start, LONG) == LaunchProfile(16, 64, 256, 4, 3, keys_as_rows=True)
    # 64 packed rows do not fit the one-warpgroup form: the 128-key form
    assert as_keys_as_rows(long_start, MTP) == LaunchProfile(64, 128, 256, 8, 2, keys_as_rows=True)
    # 128 packed rows (8 draft tokens): the 128-key form's largest block, two per sequence
    assert as_keys_as_rows(start, dataclasses.replace(MTP, max_seqlen_q=8, num_tokens=160)) == expected
    long_128 = LaunchProfile(16, 128, 128, 8, 2, keys_as_rows=True)
    tiles = [v for v in sweep_candidates(long_128, "tile_n", LONG, H200) if select.unfit_reason(v, LONG, H200) is None]
    assert {(v.tile_n, v.num_warps) for v in tiles} == {(128, 8), (64, 4)}  # each tile size with its own warps
    assert LaunchProfile(16, 64, 256, 4, 3, keys_as_rows=True) in tiles  # 3 programs per SM: the wave-matched splits
    assert not any(v.keys_as_rows for v in sweep_candidates(start, "keys_as_rows", dataclasses.replace(
        MTP, kv_dtype="bf16"), H200))  # BF16 pages: not a candidate


def test_kernel_choice_probe_times_every_kernel_at_its_own_splits():
    """scripts/unified_kernel_choice_probe.py (perf-notes v16 item 9): on the H200 every probe shape
    gets all three kernels, keys-as-rows with the call's packed rows, each at the wave rule's splits
    for its own program slots (one 128-key keys-as-rows program per SM, two wgmma programs); the
    64-key form only where the packed rows are at most 32 (decode: three programs per SM); 8 draft
    tokens (128 rows) in 64-row blocks on both Gluon kernels; BF16 pages only on Triton and wgmma."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    import unified_kernel_choice_probe as probe

    for case in probe.probe_cases():
        key = case_shape_key(case)
        found = probe.probe_profiles(key, H200)
        rows = key.group * key.max_seqlen_q
        if key.kv_dtype == "bf16":
            assert set(found) == {"triton", "wgmma"}, case.label
            continue
        one_warpgroup = {"keysrows64"} if rows <= 32 else set()
        assert set(found) == {"triton", "wgmma", "keysrows"} | one_warpgroup, case.label
        assert found["keysrows"].block_m == min(64, max(16, rows))
        for kernel, profile in found.items():
            assert select.shape_problem(profile, key) is None
            assert profile == select.with_splits(profile, key, H200), (case.label, kernel)


# ----------------------------------------------------------------------------- results (sm90 GPU)

sm90 = pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0),
                          reason="the keys-as-rows kernel needs an sm90 GPU")

# (query lengths, KV lengths, q heads, kv heads, page): variable draft lengths, sequences shorter than
# a tile, of length 1, KV lengths off tile and page boundaries, a group that is not a power of two
_SHAPES = [
    ((4, 4, 4, 4), (2051, 16, 4, 700), 16, 1, 16),
    ((4, 1, 3, 2), (5000, 1, 3, 33), 32, 2, 32),
    ((1, 1, 1), (131, 1, 4000), 16, 1, 64),
    ((1, 8, 2), (1, 300, 1234), 8, 1, 16),
    ((2, 2), (3001, 17), 24, 1, 16),
    ((3, 1), (777, 260), 12, 2, 16),
    ((1, 1, 1, 1), (4097, 65, 1, 2000), 32, 2, 16),
    ((2, 1, 2), (1500, 9, 640), 16, 1, 32),
]


def _packed(shape) -> int:
    """The profile's block_m for a shape: its queries x group, rounded up to a power of two, >= 16."""
    q_lens, _, q_heads, kv_heads, _ = shape
    return max(16, 1 << (max(q_lens) * q_heads // kv_heads - 1).bit_length())


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("shape", _SHAPES, ids=lambda s: f"q{'-'.join(map(str, s[0]))}-g{s[2] // s[3]}-p{s[4]}")
@pytest.mark.parametrize("q_dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("splits,stages", [(1, 2), (5, 2), (16, 2), (3, 3)])
@pytest.mark.parametrize("form", [KEYS_ROWS, ONE_WARPGROUP], ids=["n128", "n64"])
def test_unified_keys_rows_matches_the_float64_reference(shape, q_dtype, splits, stages, form):
    q_lens, kv_lens, q_heads, kv_heads, page = shape
    profile = dataclasses.replace(form, block_m=_packed(shape), num_splits=splits, num_stages=stages)
    key = dataclasses.replace(MTP, group=q_heads // kv_heads, max_seqlen_q=max(q_lens))
    if select.shape_problem(profile, key) or select.unfit_reason(profile, key, H200):
        pytest.skip("more packed rows or stages than the form takes (refused, tested on the CPU)")
    kwargs = UnifiedShape(q_lens, kv_lens, q_heads, kv_heads, 256, page, q_dtype=q_dtype, kv_dtype="fp8"
                          ).build("cuda", seed=sum(kv_lens) + splits).kwargs
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(out, reference.unified_attention(**kwargs))


# (query lengths, KV lengths, q heads, kv heads, block_m): a sequence's queries in blocks of block_m // group
# tokens (1, 2 or 4), sequences with fewer queries than blocks (their later blocks exit), a block whose last
# KV segment holds only keys past its queries (17 queries over 257 keys, 5 splits), a group that is not a
# power of two (12 heads in 16 columns: one token per block)
_BLOCKED_SHAPES = [
    ((4, 1, 3, 2), (2051, 16, 4, 700), 16, 1, 16),
    ((8, 5, 1), (5000, 300, 1), 16, 1, 32),
    ((17, 2, 9), (257, 3000, 40), 8, 1, 16),
    ((8, 8), (1200, 96), 16, 1, 64),
    ((3, 1), (777, 260), 24, 2, 16),
]


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("shape", _BLOCKED_SHAPES, ids=lambda s: f"q{'-'.join(map(str, s[0]))}-g{s[2] // s[3]}-m{s[4]}")
@pytest.mark.parametrize("splits", [1, 5])
@pytest.mark.parametrize("form", [KEYS_ROWS, ONE_WARPGROUP], ids=["n128", "n64"])
def test_unified_keys_rows_runs_a_sequences_queries_in_several_blocks(shape, splits, form):
    q_lens, kv_lens, q_heads, kv_heads, block_m = shape
    profile = dataclasses.replace(form, block_m=block_m, num_splits=splits)
    key = dataclasses.replace(MTP, group=q_heads // kv_heads, max_seqlen_q=max(q_lens))
    if select.shape_problem(profile, key):
        pytest.skip("more packed rows than the form takes (refused, tested on the CPU)")
    assert max(q_lens) > block_m // key.group  # more than one block per sequence
    kwargs = UnifiedShape(q_lens, kv_lens, q_heads, kv_heads, 256, 16, kv_dtype="fp8"
                          ).build("cuda", seed=sum(kv_lens) + splits).kwargs
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(out, reference.unified_attention(**kwargs))


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("splits", [1, 3])
@pytest.mark.parametrize("form", [KEYS_ROWS, ONE_WARPGROUP], ids=["n128", "n64"])
def test_unified_keys_rows_ignores_nan_bytes_past_each_sequence(splits, form):
    """The slots past a sequence's length in its last page may hold anything (here NaN bit patterns): a
    copy of whole pages (TMA) would bring them into the ring, so the test keeps a later change from
    letting them into the result."""
    profile = dataclasses.replace(form, block_m=64 if form.num_warps == 8 else 32, num_splits=splits)
    check_nan_bytes_past_lengths("fp8", profile)


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("splits", [1, 4])
@pytest.mark.parametrize("form,q_lens", [(KEYS_ROWS, (4, 2)), (dataclasses.replace(ONE_WARPGROUP, block_m=32), (2, 1)),
                                        (dataclasses.replace(KEYS_ROWS, block_m=16), (4, 2))],
                         ids=["n128", "n64", "n128-blocks"])
def test_unified_keys_rows_masks_invalid_pages(splits, form, q_lens):
    kwargs = UnifiedShape(q_lens, (700, 90), 16, 1, 256, 16, kv_dtype="fp8").build("cuda", seed=21).kwargs
    table = kwargs["block_table"].clone()
    num_blocks = kwargs["k_cache"].shape[0]
    table[0, 1], table[0, 20], table[1, 0] = -7, num_blocks + 3, 2**30
    kwargs["block_table"] = table
    profile = dataclasses.replace(form, num_splits=splits)
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(out, reference.unified_attention(**kwargs))
    every = kwargs | {"block_table": torch.full_like(table, -1)}
    out = pagedattn.unified_attention(**every, out=nan_like(kwargs["q"]), profile=profile)
    assert torch.count_nonzero(out) == 0 and not out.isnan().any()


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("splits", [1, 4])
@pytest.mark.parametrize("form,q_lens", [(KEYS_ROWS, (4, 2)), (dataclasses.replace(ONE_WARPGROUP, block_m=32), (2, 1))],
                         ids=["n128", "n64"])
def test_unified_keys_rows_pages_past_the_block_table_are_absent(splits, form, q_lens):
    """30 pages (480 keys) for a sequence of 700: with 4 splits, segments wholly and partly past the table."""
    check_pages_past_the_table(UnifiedShape(q_lens, (700, 90), 16, 1, 256, 16, kv_dtype="fp8"), 30,
                               dataclasses.replace(form, num_splits=splits), "cuda", 23)


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("splits", [1, 3])
@pytest.mark.parametrize("form,q_lens", [(KEYS_ROWS, (4, 2)), (ONE_WARPGROUP, (1, 1))], ids=["n128", "n64"])
def test_unified_keys_rows_rescales_lazily_across_rising_scores(splits, form, q_lens):
    """Scores that creep up by 3.2 per 128-key tile (1.6 per 64-key tile; under RESCALE_SLACK: the stale
    base is kept, p > 1) and jump by 30 at key 192 (O, l and P^T rescaled), checked against float64."""
    kwargs = UnifiedShape(q_lens, (700, 450), 16, 1, 256, 16, kv_dtype="fp8").build("cuda", seed=41).kwargs
    kwargs |= {"k_scale": 1.0, "v_scale": 1.0}
    plant_rising_scores(kwargs, form.tile_n, slope=0.025, jump_at=192)
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]),
                                      profile=dataclasses.replace(form, num_splits=splits))
    assert_close_to_reference(out, reference.unified_attention(**kwargs))


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("form,key", [(KEYS_ROWS, 0), (KEYS_ROWS, 40), (KEYS_ROWS, 127), (ONE_WARPGROUP, 21),
                                      (ONE_WARPGROUP, 63)], ids=["n128-w0", "n128-w2", "n128-w7", "n64-w1", "n64-w3"])
def test_unified_keys_rows_rescales_when_one_warp_alone_sees_the_jump(form, key):
    """Every sequence's key 2 x tile_n + `key` scores ~30 (log2 units) above the others
    (conftest.plant_one_unified_key_jump): only the warp holding it (keys 16 w .. 16 w + 15 of a tile)
    sees its growth pass RESCALE_SLACK, and its vote alone must make every warp rescale."""
    kwargs = UnifiedShape((4, 2), (700, 450), 16, 1, 256, 16, kv_dtype="fp8").build("cuda", seed=43).kwargs
    kwargs |= {"k_scale": 1.0, "v_scale": 1.0}
    plant_one_unified_key_jump(kwargs, 2 * form.tile_n + key)
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=form)
    assert_close_to_reference(out, reference.unified_attention(**kwargs))


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("block_m", [64, 16], ids=["one-block", "four-blocks"])
def test_unified_keys_rows_cuda_graph_replay_with_new_lengths_and_tables(block_m):
    check_unified_graph_replay("fp8", seed=6, profile=dataclasses.replace(KEYS_ROWS, block_m=block_m, num_splits=7))


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("splits", [1, 4])
@pytest.mark.parametrize("form,q_lens", [(KEYS_ROWS, (4, 3)), (ONE_WARPGROUP, (1, 1))], ids=["n128", "n64"])
def test_unified_keys_rows_fp8_scales_given_as_tensors_match_floats(splits, form, q_lens):
    """Per-tensor FP8 scales as device tensors give what the same scales as floats give, and both
    match the float64 reference; the scales are far from 1 so that a scale applied twice, or not at
    all, fails."""
    kwargs = UnifiedShape(q_lens, (1500, 260), 16, 1, 256, 16, kv_dtype="fp8").build("cuda", seed=51).kwargs
    kwargs |= {"k_scale": kwargs["k_scale"] * 7.0, "v_scale": kwargs["v_scale"] / 5.0}
    profile = dataclasses.replace(form, num_splits=splits)
    as_floats = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(as_floats, reference.unified_attention(**kwargs))
    tensors = {name: torch.tensor([kwargs[name]], dtype=torch.float32, device="cuda") for name in ("k_scale", "v_scale")}
    as_tensors = pagedattn.unified_attention(**(kwargs | tensors), out=nan_like(kwargs["q"]), profile=profile)
    torch.testing.assert_close(as_tensors, as_floats, rtol=0, atol=0)


@pytest.mark.gpu
@sm90
def test_unified_keys_rows_reads_v_with_its_own_strides():
    """K and V caches with different strides (V pages head-major) take the copies' second addressing
    branch; equal strides (every other test) share one offset per key."""
    kwargs = UnifiedShape((4, 3), (900, 77), 16, 2, 256, 16, kv_dtype="fp8").build("cuda", seed=31).kwargs
    kwargs["v_cache"] = kwargs["v_cache"].permute(0, 2, 1, 3).contiguous().permute(0, 2, 1, 3)
    assert kwargs["v_cache"].stride() != kwargs["k_cache"].stride()
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]),
                                      profile=dataclasses.replace(KEYS_ROWS, num_splits=3))
    assert_close_to_reference(out, reference.unified_attention(**kwargs))
