"""The warpgroup-MMA verify kernel (ops/verify_wgmma.py, profile flag `warpgroup_mma`).

Where the profile layer sends a call and why it refuses one are pure functions, tested here on the
CPU. The kernel is written in Gluon, which Triton's interpreter does not run: its sm90 build is
checked offline in tests/test_compile.py and its results by the GPU tests below (marked `gpu`:
skipped on machines without a CUDA GPU, and on GPUs other than sm90).
"""

import dataclasses
import json

import pytest
import torch
import triton

import pagedattn
from pagedattn import LaunchProfile, api, reference
from pagedattn.device import INTERPRETER, KNOWN_DEVICES
from pagedattn.profiles import select, tables
from pagedattn.profiles.types import ShapeKey
from pagedattn.tune import as_warpgroup_mma, pipeline_matched, sweep_candidates
from pagedattn.workloads import UnifiedShape
from conftest import (
    assert_close_to_reference, check_refused_off_hopper, check_shape_refusal, check_unified_graph_replay, nan_like,
    check_nan_bytes_past_lengths, check_pages_past_the_table, padded_rows, plant_rising_scores,
)

H200 = KNOWN_DEVICES["NVIDIA_H200"]
H100 = KNOWN_DEVICES["NVIDIA_H100_80GB_HBM3"]
A100 = KNOWN_DEVICES["NVIDIA_A100_SXM4_80GB"]
WGMMA = LaunchProfile(64, 16, 1, 4, 4, warpgroup_mma=True)
MTP = ShapeKey("unified", "bf16", 256, 16, "verify", 20, 4, 80, 1, 32768)  # B=20, 4 draft tokens, 16q/1kv


pytestmark = pytest.mark.usefixtures("no_tuned_tables")


# ----------------------------------------------------------------------------- selection (CPU)


@pytest.mark.parametrize("device", [H200, H100], ids=["H200", "H100"])
@pytest.mark.parametrize("kv_dtype,group,draft,kv_len", [("bf16", 16, 4, 32768), ("fp16", 16, 4, 32768),
                                                          ("bf16", 8, 8, 32768), ("bf16", 6, 10, 32768),
                                                          ("fp8", 16, 4, 2048), ("fp8", 8, 2, 2048),
                                                          ("bf16", 16, 8, 32768), ("bf16", 16, 5, 8192),
                                                          ("fp8", 16, 8, 1024)])
def test_sm90_without_a_table_runs_plain_verify_at_head_256_on_wgmma(device, kv_dtype, group, draft, kv_len):
    """16-bit pages, and FP8 pages at up to 384 keys per SM (20 sequences x 2,048 keys: 310; more take
    the keys-as-rows kernel, tests/test_unified_keys_rows.py); up to 128 packed rows, in 64-row blocks
    (perf-notes v20 item 1)."""
    key = dataclasses.replace(MTP, kv_dtype=kv_dtype, group=group, max_seqlen_q=draft, num_tokens=20 * draft,
                              kv_len=kv_len)
    chosen = select.untuned_selection(key, device)
    assert chosen.source == "rules" and chosen.profile.warpgroup_mma
    assert (chosen.profile.block_m, chosen.profile.tile_n, chosen.profile.num_warps, chosen.profile.num_stages) == \
        (64, 16, 4, 4)
    assert not chosen.profile.kv_major
    assert chosen.profile.addresses_ahead == (kv_dtype != "fp8")  # 16-bit pages read the page table a step ahead
    assert select.shape_problem(chosen.profile, key) is None


def test_wgmma_splits_come_from_its_own_program_slots():
    """~210 registers and 96 KB of shared memory: two programs per SM, so 20 sequences x 1 KV head
    split 13 ways (260 of 264 slots: the most that fit one wave, the H200 table's count)."""
    profile = select.untuned_selection(MTP, H200).profile
    assert select.program_slots(profile, MTP, H200) == 2 * 132
    assert profile.num_splits == 13


@pytest.mark.parametrize("change,triton_fields", [
    ({"score_mods": True}, {"tile_n": 16, "addresses_ahead": True}),  # window/softcap/sinks: the Triton verify row
    ({"kv_dtype": "fp8", "score_mods": True}, {"tile_n": 32, "addresses_ahead": True}),  # its FP8 row
    ({"max_seqlen_q": 8, "num_tokens": 160, "group": 32}, {"tile_n": 16, "addresses_ahead": True}),  # 256 rows
    ({"head_size": 128}, {}),  # no D128 verify row at 64 rows: the analytic default
])
def test_sm90_calls_the_wgmma_kernel_cannot_compute_fall_to_the_triton_kernel(change, triton_fields):
    key = dataclasses.replace(MTP, **change)
    chosen = select.untuned_selection(key, H200).profile
    assert not chosen.warpgroup_mma
    assert {name: getattr(chosen, name) for name in triton_fields} == triton_fields


@pytest.mark.parametrize("device", [A100, KNOWN_DEVICES["AMD_INSTINCT_MI300X"]], ids=["A100", "MI300X"])
def test_other_arches_never_get_wgmma(device):
    assert not select.untuned_selection(MTP, device).profile.warpgroup_mma


@pytest.mark.parametrize("profile_change,key_change,needle", [
    ({"num_warps": 8}, {}, "one warpgroup"),
    ({"block_m": 128}, {}, "one warpgroup"),
    ({"kv_major": True}, {}, "kv_major"),
    ({"num_stages": 2}, {}, "num_stages >= 3"),
    ({"tile_n": 128}, {}, "tile_n <= 64"),
    ({}, {"kv_dtype": "fp8", "head_size": 64}, "16 bytes per thread"),
    ({}, {"head_size": 96}, "head sizes"),
    ({}, {"group": 80, "max_seqlen_q": 1}, "smaller than the GQA group"),
    ({}, {"score_mods": True}, "softcap"),
    ({}, {"aligned_cache": False}, "16-byte pieces"),
    ({}, {"kernel": "sparse"}, "unified-kernel"),
])
def test_every_reason_the_wgmma_kernel_refuses_a_call(profile_change, key_change, needle):
    check_shape_refusal(dataclasses.replace(WGMMA, **profile_change), dataclasses.replace(MTP, **key_change), needle,
                        H200)
    assert select.shape_problem(WGMMA, MTP) is None  # the unchanged pair is fine
    assert select.shape_problem(dataclasses.replace(WGMMA, addresses_ahead=True), MTP) is None


@pytest.mark.parametrize("device,needle", [(INTERPRETER, "interpreter"), (A100, "sm90")])
def test_wgmma_is_refused_off_hopper(device, needle):
    check_refused_off_hopper(WGMMA, MTP, device, needle, H100)
    assert needle in select.unfit_reason(WGMMA, MTP, device)
    assert select.device_problem(dataclasses.replace(WGMMA, warpgroup_mma=False), INTERPRETER) is None


def test_a_table_entry_with_wgmma_is_not_used_where_it_cannot_run(tmp_path, monkeypatch):
    """A tuned wgmma entry serves its bucket on the GPU it was tuned on, but a call of that bucket
    with a softcap (not a table coordinate) goes to the rules' Triton profile."""
    monkeypatch.setattr(tables, "TABLE_DIR", tmp_path)
    tables.clear_cache()
    entry = {"key": MTP.bucket(), "profile": dataclasses.replace(WGMMA, num_splits=13).to_dict()}
    meta = {"device": H200.name, "triton": triton.__version__, "kernel_hash": {"unified": tables.kernel_hash("unified")}}
    (tmp_path / f"{H200.name}.json").write_text(json.dumps({"meta": meta, "entries": [entry]}))
    assert select.select_profile(MTP, H200).profile == dataclasses.replace(WGMMA, num_splits=13)
    softcapped = select.select_profile(dataclasses.replace(MTP, score_mods=True), H200)
    assert softcapped.source == "rules" and not softcapped.profile.warpgroup_mma


def test_api_call_with_wgmma_on_the_interpreter_names_the_reason(device):
    if device != "cpu":
        pytest.skip("the interpreter refusal is a CPU-machine path")
    kwargs = UnifiedShape((4, 2), (40, 20), 16, 1, 64, 16).build(device, seed=3).kwargs
    with pytest.raises(ValueError, match="interpreter"):
        pagedattn.unified_attention(**kwargs, profile=WGMMA)


@pytest.mark.parametrize("extra,score_mods", [({}, False), ({"softcap": 30.0}, True), ({"sliding_window": 16}, True),
                                              ({"sinks": "tensor"}, True)])
def test_unified_attention_hands_score_mods_to_the_profile_layer(device, monkeypatch, extra, score_mods):
    """The public call tells the dispatcher whether scores are modified, so an sm90 call with a
    softcap, window or sinks is never sent to the wgmma kernel (which has none of them)."""
    seen = []

    def record(*args, **kwargs):
        seen.append(kwargs.get("score_mods", args[6] if len(args) > 6 else False))
        return (select.PlannedLaunch(select.Selection(LaunchProfile(16, 16, 1), "explicit")),)

    monkeypatch.setattr(api, "choose_unified_plan", record)
    kwargs = UnifiedShape((2, 1), (40, 20), 4, 1, 32, 16).build(device, seed=4).kwargs
    if extra.get("sinks") == "tensor":
        extra = {"sinks": torch.zeros(4, device=device)}
    pagedattn.unified_attention(**(kwargs | extra))
    assert seen == [score_mods]


def test_softcap_window_and_sinks_count_as_score_mods():
    assert not api.has_score_mods()
    assert api.has_score_mods(softcap=30.0) and api.has_score_mods(sliding_window=128)
    assert api.has_score_mods(sinks=torch.zeros(4))


def test_tuner_moves_to_wgmma_with_its_fixed_fields():
    start = LaunchProfile(64, 16, 12, 4, 2, addresses_ahead=True)
    variants = sweep_candidates(start, "warpgroup_mma", MTP, H200)
    moved = [v for v in variants if v.warpgroup_mma]
    assert as_warpgroup_mma(start, MTP) in moved
    assert all(select.shape_problem(v, MTP) is None for v in moved)
    assert as_warpgroup_mma(start, MTP).num_stages == 3 and as_warpgroup_mma(start, MTP).num_splits == 12
    assert as_warpgroup_mma(start, MTP).addresses_ahead and not as_warpgroup_mma(dataclasses.replace(
        start, addresses_ahead=False), MTP).addresses_ahead  # the kernel has both forms: the move keeps the flag
    # a tile change keeps the ring's bytes: 4 x 16 keys -> 2 x 32 keys, raised to the 3-stage minimum
    assert pipeline_matched(dataclasses.replace(WGMMA, tile_n=32), WGMMA).num_stages == 3
    assert pipeline_matched(dataclasses.replace(WGMMA, tile_n=16), dataclasses.replace(WGMMA, tile_n=32,
                                                                                       num_stages=3)).num_stages == 6


# ----------------------------------------------------------------------------- results (sm90 GPU)

sm90 = pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0),
                          reason="the warpgroup-MMA kernel needs an sm90 GPU")

# (query lengths, KV lengths, q heads, kv heads, head size, page): variable draft lengths, sequences
# shorter than a tile, of length 1, and KV lengths off tile and page boundaries
_SHAPES = [
    ((4, 4, 4, 4), (2051, 16, 4, 700), 16, 1, 256, 16),
    ((4, 1, 3, 2), (5000, 1, 3, 33), 32, 2, 256, 32),
    ((10, 7, 1), (901, 10, 64), 6, 1, 128, 64),
    ((1, 8, 2), (1, 300, 1234), 8, 1, 64, 16),
    ((2, 2), (3001, 17), 24, 1, 128, 16),
]


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("shape", _SHAPES, ids=lambda s: f"q{'-'.join(map(str, s[0]))}-g{s[2] // s[3]}-d{s[4]}-p{s[5]}")
@pytest.mark.parametrize("q_dtype,kv_dtype", [("bf16", "bf16"), ("fp16", "fp16"), ("bf16", "fp8"), ("fp16", "fp8")])
@pytest.mark.parametrize("profile", [WGMMA, dataclasses.replace(WGMMA, num_splits=5, num_stages=3),
                                     dataclasses.replace(WGMMA, tile_n=32, num_splits=3, num_stages=3),
                                     dataclasses.replace(WGMMA, tile_n=64, num_splits=16, num_stages=3),
                                     dataclasses.replace(WGMMA, num_splits=5, num_stages=5, addresses_ahead=True),
                                     dataclasses.replace(WGMMA, tile_n=32, num_stages=3, addresses_ahead=True)],
                         ids=lambda p: p.short())
def test_wgmma_matches_the_float64_reference(shape, q_dtype, kv_dtype, profile):
    q_lens, kv_lens, q_heads, kv_heads, head, page = shape
    if profile.tile_n == 64 and head == 256:
        pytest.skip("n64 at D=256 leaves no room for two programs per SM; covered at smaller heads")
    if kv_dtype == "fp8" and profile.tile_n * head < 2048:
        pytest.skip("an FP8 tile this small cannot give every thread a 16-byte copy (refused, tested on the CPU)")
    kwargs = UnifiedShape(q_lens, kv_lens, q_heads, kv_heads, head, page, q_dtype=q_dtype, kv_dtype=kv_dtype
                          ).build("cuda", seed=sum(kv_lens)).kwargs
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(out, reference.unified_attention(**kwargs))


# (query lengths, KV lengths, q heads, kv heads, head size): more queries x group than 64 rows, so each
# sequence's queries run in blocks of 64 // group tokens (4, 8, 2); sequences with fewer queries than
# blocks; a block whose last KV segment holds only keys past its queries (17 queries over 257 keys at
# 5 splits); 24 heads (two tokens in 48 of the 64 rows)
_BLOCKED_SHAPES = [
    ((8, 5, 1), (2051, 300, 9), 16, 1, 256),
    ((10, 7, 1), (901, 10, 64), 8, 1, 128),
    ((17, 2, 9), (257, 3000, 40), 8, 1, 64),
    ((3, 5), (777, 260), 48, 2, 256),
]


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("shape", _BLOCKED_SHAPES, ids=lambda s: f"q{'-'.join(map(str, s[0]))}-g{s[2] // s[3]}-d{s[4]}")
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
@pytest.mark.parametrize("profile", [WGMMA, dataclasses.replace(WGMMA, num_splits=5, num_stages=5, addresses_ahead=True)],
                         ids=lambda p: p.short())
def test_wgmma_runs_a_sequences_queries_in_several_blocks(shape, kv_dtype, profile):
    q_lens, kv_lens, q_heads, kv_heads, head = shape
    assert max(q_lens) * q_heads // kv_heads > 64
    if kv_dtype == "fp8" and profile.tile_n * head < 2048:
        pytest.skip("an FP8 tile this small cannot give every thread a 16-byte copy (refused, tested on the CPU)")
    kwargs = UnifiedShape(q_lens, kv_lens, q_heads, kv_heads, head, 16, kv_dtype=kv_dtype
                          ).build("cuda", seed=sum(kv_lens) + profile.num_splits).kwargs
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(out, reference.unified_attention(**kwargs))


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("splits", [1, 3])
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_wgmma_ignores_nan_bytes_past_each_sequence(splits, kv_dtype):
    """As tests/test_unified_keys_rows.py's test of the name: NaN bit patterns in the slots past each
    sequence's length in its last page stay out of the result."""
    check_nan_bytes_past_lengths(kv_dtype, dataclasses.replace(WGMMA, num_splits=splits))


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("ahead", [False, True], ids=["pages-in-step", "pages-ahead"])
@pytest.mark.parametrize("splits", [1, 4])
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
@pytest.mark.parametrize("q_lens", [(4, 2), (8, 2)], ids=["one-block", "two-blocks"])
def test_wgmma_masks_invalid_pages(splits, kv_dtype, ahead, q_lens):
    kwargs = UnifiedShape(q_lens, (700, 90), 16, 1, 256, 16, kv_dtype=kv_dtype).build("cuda", seed=21).kwargs
    table = kwargs["block_table"].clone()
    num_blocks = kwargs["k_cache"].shape[0]
    table[0, 1], table[0, 20], table[1, 0] = -7, num_blocks + 3, 2**30
    kwargs["block_table"] = table
    profile = dataclasses.replace(WGMMA, num_splits=splits, addresses_ahead=ahead)
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(out, reference.unified_attention(**kwargs))
    every = kwargs | {"block_table": torch.full_like(table, -1)}
    out = pagedattn.unified_attention(**every, out=nan_like(kwargs["q"]), profile=profile)
    assert torch.count_nonzero(out) == 0 and not out.isnan().any()


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("ahead", [False, True], ids=["pages-in-step", "pages-ahead"])
@pytest.mark.parametrize("splits", [1, 4])
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_wgmma_pages_past_the_block_table_are_absent(splits, kv_dtype, ahead):
    """30 pages (480 keys) for a sequence of 700: with 4 splits, segments wholly and partly past the table."""
    check_pages_past_the_table(UnifiedShape((4, 2), (700, 90), 16, 1, 256, 16, kv_dtype=kv_dtype), 30,
                               dataclasses.replace(WGMMA, num_splits=splits, addresses_ahead=ahead), "cuda", 23)


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("splits", [1, 3])
def test_wgmma_rescales_o_across_rising_scores(splits):
    """Scores that creep up and then jump by 30 (log2 units, conftest.plant_rising_scores): O and l
    rescaled on every tile, by factors from ~1 down to 2^-30, checked against float64 (the kernel
    rescales eagerly: the lazy form lost 6 % on the H200, perf-notes v10 item 2)."""
    kwargs = UnifiedShape((4, 2), (192, 150), 16, 1, 256, 16).build("cuda", seed=41).kwargs
    plant_rising_scores(kwargs, WGMMA.tile_n)
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]),
                                      profile=dataclasses.replace(WGMMA, num_splits=splits))
    assert_close_to_reference(out, reference.unified_attention(**kwargs))


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("ahead", [False, True], ids=["pages-in-step", "pages-ahead"])
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
@pytest.mark.parametrize("q_len", [4, 8], ids=["one-block", "two-blocks"])
def test_wgmma_cuda_graph_replay_with_new_lengths_and_tables(kv_dtype, ahead, q_len):
    check_unified_graph_replay(kv_dtype, seed=6, profile=dataclasses.replace(WGMMA, num_splits=7, addresses_ahead=ahead),
                               q_len=q_len)


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("splits", [1, 4])
def test_wgmma_fp8_scales_given_as_tensors_match_floats(splits):
    """Per-tensor FP8 scales as device tensors (read by the kernel, CUDA-graph safe) give what the
    same scales as floats give, and both match the float64 reference; the scales are far from 1
    so that a scale applied twice, or not at all, fails."""
    kwargs = UnifiedShape((4, 3), (1500, 260), 16, 1, 256, 16, kv_dtype="fp8").build("cuda", seed=51).kwargs
    kwargs |= {"k_scale": kwargs["k_scale"] * 7.0, "v_scale": kwargs["v_scale"] / 5.0}
    profile = dataclasses.replace(WGMMA, num_splits=splits)
    as_floats = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(as_floats, reference.unified_attention(**kwargs))
    tensors = {name: torch.tensor([kwargs[name]], dtype=torch.float32, device="cuda") for name in ("k_scale", "v_scale")}
    as_tensors = pagedattn.unified_attention(**(kwargs | tensors), out=nan_like(kwargs["q"]), profile=profile)
    torch.testing.assert_close(as_tensors, as_floats, rtol=0, atol=0)


@pytest.mark.gpu
@sm90
def test_wgmma_reads_v_with_its_own_strides():
    """K and V caches with different strides (V pages head-major) take the kernel's second
    addressing branch; equal strides (every other test) share one offset per key."""
    kwargs = UnifiedShape((4, 3), (900, 77), 16, 2, 128, 16).build("cuda", seed=31).kwargs
    kwargs["v_cache"] = kwargs["v_cache"].permute(0, 2, 1, 3).contiguous().permute(0, 2, 1, 3)
    assert kwargs["v_cache"].stride() != kwargs["k_cache"].stride()
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]),
                                      profile=dataclasses.replace(WGMMA, num_splits=3))
    assert_close_to_reference(out, reference.unified_attention(**kwargs))


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_caches_the_gluon_kernels_cannot_copy_whole_run_on_the_triton_kernel(kv_dtype):
    """Verify at head size 256 (the sm90 rules' wgmma or keys-as-rows shape) over caches whose strides
    are not multiples of 16 values: the dispatcher picks a Triton profile and computes the right
    result; the wgmma profile given explicitly is refused with the reason (before v25 the Gluon
    kernels' build failed inside Triton)."""
    kwargs = UnifiedShape((4, 4), (700, 300), 16, 1, 256, 16, kv_dtype=kv_dtype).build("cuda", seed=37).kwargs
    kwargs["k_cache"], kwargs["v_cache"] = padded_rows(kwargs["k_cache"]), padded_rows(kwargs["v_cache"])
    chosen = api.choose_unified_profile(kwargs["q"], kwargs["k_cache"], kwargs["block_table"], kwargs["max_seqlen_q"],
                                        kwargs["max_seqlen_k"], v_cache=kwargs["v_cache"]).profile
    assert not (chosen.warpgroup_mma or chosen.keys_as_rows)
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]))
    assert_close_to_reference(out, reference.unified_attention(**kwargs))
    with pytest.raises(ValueError, match="16-byte pieces"):
        pagedattn.unified_attention(**kwargs, profile=WGMMA)
