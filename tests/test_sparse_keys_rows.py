"""Sparse attention on the keys-as-rows kernel (ops/sparse_keys_rows.py, profile `keys_as_rows`).

CPU: the profile layer's side (what it refuses and why, where the sm90 rules send FP8 calls, the
tuner's move to the kernel). The kernel itself is Gluon, which the interpreter cannot run:
tests/test_compile.py builds it offline for sm90, and the `gpu` tests below check its results on an
sm90 GPU (skipped elsewhere) against the float64 reference.
"""

import dataclasses

import pytest
import torch

from pagedattn import LaunchProfile
from pagedattn.device import INTERPRETER, KNOWN_DEVICES
from pagedattn.profiles import select
from pagedattn.profiles.types import ShapeKey
from pagedattn.tune import as_keys_as_rows, field_values, sweep_candidates
from pagedattn.workloads import SparseShape
from conftest import (
    check_refused_off_hopper, check_shape_refusal, check_sparse, check_sparse_graph_replay, check_sparse_interleaved_cache,
    check_sparse_masking, check_sparse_scales_as_tensors, plant_one_key_jump, plant_rising_sparse_scores,
)

H200 = KNOWN_DEVICES["NVIDIA_H200"]
H100 = KNOWN_DEVICES["NVIDIA_H100_80GB_HBM3"]
A100 = KNOWN_DEVICES["NVIDIA_A100_SXM4_80GB"]
KEYS_ROWS = LaunchProfile(16, 64, 1, 4, 2, keys_as_rows=True)
TP4 = ShapeKey("sparse", "fp8", 256, 6, "decode", 8192, 1, 8192, 1, 2051)  # 6q/1kv, 8,192 rows, top-k 2,051

pytestmark = pytest.mark.usefixtures("no_tuned_tables")


# ----------------------------------------------------------------------------- selection (CPU)


@pytest.mark.parametrize("profile_change,key_change,needle", [
    ({"num_warps": 2}, {}, "4 warps"),
    ({"tile_n": 32}, {}, "tile_n=64"),
    ({"block_m": 32}, {}, "block_m=16"),
    ({"addresses_ahead": True}, {}, "addresses_ahead"),
    ({"shared_exchange": True}, {}, "shared_exchange"),
    ({"num_stages": 1}, {}, "num_stages >= 2"),
    ({}, {"kv_dtype": "bf16"}, "FP8 pages only"),
    ({}, {"head_size": 64}, "head sizes 128 and 256"),
    ({}, {"group": 24}, "smaller than the GQA group"),
    ({}, {"aligned_cache": False}, "16-byte pieces"),
    # a unified call is judged by the unified keys-as-rows kernel's rules (its one-warpgroup form takes these
    # fields, but head size 256 only)
    ({}, {"kernel": "unified", "head_size": 128}, "supports head size 256"),
])
def test_every_reason_the_keys_rows_kernel_refuses_a_call(profile_change, key_change, needle):
    check_shape_refusal(dataclasses.replace(KEYS_ROWS, **profile_change), dataclasses.replace(TP4, **key_change),
                        needle, H200)
    assert select.shape_problem(KEYS_ROWS, TP4) is None  # the unchanged pair is fine


@pytest.mark.parametrize("device,needle", [(INTERPRETER, "interpreter"), (A100, "sm90")])
def test_keys_rows_is_refused_off_hopper(device, needle):
    check_refused_off_hopper(KEYS_ROWS, TP4, device, needle, H200)


@pytest.mark.parametrize("device", [H200, H100], ids=["H200", "H100"])
@pytest.mark.parametrize("change,keys_as_rows", [
    ({}, True),  # TP4 at 8,192 rows
    ({"group": 3}, True),  # TP8
    ({"group": 8, "head_size": 128}, True),
    ({"group": 12}, False),  # TP2: 16 heads, the exchange kernel
    ({"num_seqs": 520, "num_tokens": 520}, False),  # 520 programs: the exchange kernel
    ({"kv_dtype": "bf16"}, False),
    ({"head_size": 64}, False),
])
def test_sm90_rules_send_small_fp8_groups_at_prefill_size_to_it(device, change, keys_as_rows):
    key = dataclasses.replace(TP4, **change)
    chosen = select.untuned_selection(key, device).profile
    assert chosen.keys_as_rows == keys_as_rows
    assert select.shape_problem(chosen, key) is None
    if keys_as_rows:
        assert chosen == KEYS_ROWS
    else:
        assert chosen.shared_exchange


def test_tuner_moves_to_the_keys_rows_kernel_with_its_fixed_fields():
    start = LaunchProfile(16, 32, 1, 2, 3, shared_exchange=True)
    moved = [v for v in sweep_candidates(start, "keys_as_rows", TP4, H200) if v.keys_as_rows]
    assert moved == [as_keys_as_rows(start, TP4)]
    assert moved[0] == dataclasses.replace(KEYS_ROWS, num_stages=3)
    assert select.shape_problem(moved[0], TP4) is None
    back = [v for v in sweep_candidates(moved[0], "shared_exchange", TP4, H200) if v.shared_exchange]
    assert back and not any(v.keys_as_rows for v in back)
    assert field_values(dataclasses.replace(TP4, kv_dtype="bf16"))["keys_as_rows"] == (False,)


def test_shared_memory_estimate_bounds_every_buffer():
    """Three e4m3 q terms of 8 heads, the ring (2 x stages x 64 x D), the fp32 masks, P^T (fp16, 64 x
    8), the votes (one fp32 per thread of the 4 warps) and 1 KB of alignment; tests/test_compile.py
    checks it against the builds."""
    assert select.smem_bytes(KEYS_ROWS, TP4) == 3 * 8 * 256 + 2 * 2 * 64 * 256 + 4 * 128 + 64 * 8 * 2 + 512 + 1024
    assert select.program_slots(KEYS_ROWS, TP4, H200) == 3 * 132


# ----------------------------------------------------------------------------- results (sm90 GPU)

sm90 = pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0),
                          reason="the keys-as-rows kernel needs an sm90 GPU")
_seed = iter(range(90_000, 1_000_000))


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("profile", [KEYS_ROWS, dataclasses.replace(KEYS_ROWS, num_splits=3, num_stages=3)],
                         ids=lambda p: p.short())
@pytest.mark.parametrize("q_dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("heads,head_size,page", [((24, 2), 256, 16), ((12, 1), 128, 32), ((6, 1), 256, 64),
                                                  ((3, 1), 256, 16), ((5, 1), 128, 16), ((16, 1), 128, 32)],
                         ids=["tp1", "tp2-d128", "tp4", "tp8", "g5-d128", "g16-d128"])
def test_keys_rows_matches_the_float64_reference(profile, q_dtype, heads, head_size, page):
    shape = SparseShape(2, 700, 5, heads[0], heads[1], head_size, topk=300, local_window=64, block_size=page,
                        q_dtype=q_dtype, kv_dtype="fp8", interleave=True)
    check_sparse(shape.build("cuda", seed=next(_seed)).kwargs, profile)


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("splits", [1, 4])
def test_keys_rows_masks_padding_invalid_pages_empty_rows_and_counts_duplicates(splits):
    check_sparse_masking(dataclasses.replace(KEYS_ROWS, num_splits=splits), "fp8", next(_seed))


@pytest.mark.gpu
@sm90
def test_keys_rows_rescales_only_past_the_slack():
    """Scores that creep up and jump by 30 once (conftest.plant_rising_sparse_scores): tiles within
    the slack keep the stale base, the jump takes the second barrier."""
    kwargs = SparseShape(1, 300, 2, 4, 1, 128, topk=256, local_window=64, kv_dtype="fp8").build(
        "cuda", seed=next(_seed)).kwargs
    plant_rising_sparse_scores(kwargs, KEYS_ROWS.tile_n)
    check_sparse(kwargs, KEYS_ROWS)


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("key", [0, 21, 63])
def test_keys_rows_rescales_when_one_warp_alone_sees_the_jump(key):
    """The jump at key `key` of tile 2 (keys 16 w .. 16 w + 15 of a tile belong to warp w): only that
    warp's growth passes RESCALE_SLACK, and its vote alone must make every warp rescale
    (conftest.plant_one_key_jump)."""
    kwargs = SparseShape(1, 300, 2, 4, 1, 128, topk=256, local_window=64, kv_dtype="fp8").build(
        "cuda", seed=next(_seed)).kwargs
    plant_one_key_jump(kwargs, 2 * KEYS_ROWS.tile_n + key)
    check_sparse(kwargs, KEYS_ROWS)


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("splits", [1, 3])
def test_keys_rows_fp8_scales_given_as_tensors_match_floats(splits):
    check_sparse_scales_as_tensors(dataclasses.replace(KEYS_ROWS, num_splits=splits), next(_seed))


@pytest.mark.gpu
@sm90
def test_keys_rows_reads_k_and_v_interleaved_in_one_cache():
    check_sparse_interleaved_cache(dataclasses.replace(KEYS_ROWS, num_splits=2), "fp8", next(_seed))


@pytest.mark.gpu
@sm90
def test_keys_rows_at_real_size():
    """Top-k 2,051 at D=256 over two 16,384-token requests, TP4 heads, 2,048 rows."""
    kwargs = SparseShape(2, 16384, 1024, 6, 1, 256, kv_dtype="fp8").build("cuda", seed=next(_seed)).kwargs
    check_sparse(kwargs, KEYS_ROWS)


@pytest.mark.gpu
@sm90
def test_keys_rows_cuda_graph_replay_with_new_selections():
    """Capture once at fixed shapes; replay after writing new selections, requests and queries."""
    check_sparse_graph_replay(SparseShape(2, 4096, 64, 6, 1, 256, kv_dtype="fp8"), next(_seed),
                              dataclasses.replace(KEYS_ROWS, num_splits=3))
