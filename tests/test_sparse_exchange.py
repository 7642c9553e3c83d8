"""Sparse attention on the shared-exchange kernel (ops/sparse_exchange.py, profile `shared_exchange`).

CPU: the profile layer's side (what it refuses and why, the shared-memory estimate, the tuner's
move to the kernel). The kernel itself is Gluon, which the interpreter cannot run: tests/test_compile.py
builds it offline for sm90, and the `gpu` tests below check its results on an sm90 GPU (skipped
elsewhere) against the float64 reference.
"""

import dataclasses

import pytest
import torch

import pagedattn
from pagedattn import LaunchProfile, reference
from pagedattn.device import INTERPRETER, KNOWN_DEVICES
from pagedattn.profiles import select
from pagedattn.profiles.types import ShapeKey
from pagedattn.tune import as_shared_exchange, pipeline_matched, sweep_candidates
from pagedattn.workloads import SparseShape
from conftest import (
    check_refused_off_hopper, check_shape_refusal, check_sparse, check_sparse_graph_replay, check_sparse_interleaved_cache,
    check_sparse_masking, check_sparse_scales_as_tensors, nan_like, padded_rows, plant_one_key_jump,
    plant_rising_sparse_scores,
)

H200 = KNOWN_DEVICES["NVIDIA_H200"]
A100 = KNOWN_DEVICES["NVIDIA_A100_SXM4_80GB"]
EXCHANGE = LaunchProfile(16, 32, 1, 2, 2, shared_exchange=True)
PREFILL = ShapeKey("sparse", "bf16", 256, 12, "decode", 8192, 1, 8192, 1, 2051)  # TP2, 8,192 rows, top-k 2,051

pytestmark = pytest.mark.usefixtures("no_tuned_tables")


# ----------------------------------------------------------------------------- selection (CPU)


@pytest.mark.parametrize("profile_change,key_change,needle", [
    ({"num_warps": 4}, {}, "2 warps"),
    ({"block_m": 32}, {}, "2 warps"),
    ({"addresses_ahead": True}, {}, "addresses_ahead"),
    ({"kv_major": True}, {}, "kv_major"),
    ({"num_stages": 1}, {}, "num_stages >= 2"),
    ({"tile_n": 128}, {}, "tile_n <= 64"),
    ({}, {"head_size": 96}, "head sizes"),
    ({}, {"group": 24}, "smaller than the GQA group"),
    ({}, {"aligned_cache": False}, "16-byte pieces"),
    ({}, {"kernel": "unified"}, "sparse-kernel"),
])
def test_every_reason_the_exchange_kernel_refuses_a_call(profile_change, key_change, needle):
    check_shape_refusal(dataclasses.replace(EXCHANGE, **profile_change), dataclasses.replace(PREFILL, **key_change),
                        needle, H200)
    assert select.shape_problem(EXCHANGE, PREFILL) is None  # the unchanged pair is fine


@pytest.mark.parametrize("device,needle", [(INTERPRETER, "interpreter"), (A100, "sm90")])
def test_exchange_is_refused_off_hopper(device, needle):
    check_refused_off_hopper(EXCHANGE, PREFILL, device, needle, H200)


def test_shared_memory_estimate_counts_every_buffer():
    """Ring (2 x stages x tile x D x bytes), P (16-bit), maxima (16 x 2 fp32), votes (one fp32 per
    thread: 64), an fp32 mask per ring key, and Q (16-bit) for 16-bit pages only: the sizes
    tests/test_compile.py reads from the builds."""
    assert select.smem_bytes(EXCHANGE, PREFILL) == 2 * 2 * 32 * 256 * 2 + 16 * 256 * 2 + 16 * 32 * 2 + 128 + 256 + 256
    fp8 = dataclasses.replace(PREFILL, kv_dtype="fp8")
    assert select.smem_bytes(EXCHANGE, fp8) == 2 * 2 * 32 * 256 + 16 * 32 * 2 + 128 + 256 + 256


def test_tuner_moves_to_the_exchange_kernel_with_its_fixed_fields():
    start = LaunchProfile(16, 64, 1, 4, 3, addresses_ahead=True)
    moved = [v for v in sweep_candidates(start, "shared_exchange", PREFILL, H200) if v.shared_exchange]
    assert as_shared_exchange(start, PREFILL) in moved
    assert all(select.shape_problem(v, PREFILL) is None for v in moved)
    assert (as_shared_exchange(start, PREFILL).tile_n, as_shared_exchange(start, PREFILL).num_stages) == (32, 3)
    # a tile change keeps the ring's bytes: 2 x 32 keys -> 4 x 16 keys; never below the 2-stage minimum
    assert pipeline_matched(dataclasses.replace(EXCHANGE, tile_n=16), EXCHANGE).num_stages == 4
    assert pipeline_matched(dataclasses.replace(EXCHANGE, tile_n=64), EXCHANGE).num_stages == 2
    unified = ShapeKey("unified", "bf16", 256, 16, "verify", 20, 4, 80, 1, 32768)
    assert not any(v.shared_exchange for v in sweep_candidates(start, "shared_exchange", unified, H200))


# ----------------------------------------------------------------------------- results (sm90 GPU)

sm90 = pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0),
                          reason="the shared-exchange kernel needs an sm90 GPU")
_seed = iter(range(70_000, 1_000_000))
_PROFILES = [EXCHANGE, dataclasses.replace(EXCHANGE, tile_n=16, num_stages=3, num_splits=3),
             dataclasses.replace(EXCHANGE, tile_n=64, num_splits=2), dataclasses.replace(EXCHANGE, num_stages=4)]


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("profile", _PROFILES, ids=lambda p: p.short())
@pytest.mark.parametrize("q_dtype,kv_dtype", [("bf16", "bf16"), ("fp16", "fp16"), ("bf16", "fp8"), ("fp16", "fp8")])
@pytest.mark.parametrize("heads,head_size,page", [((24, 2), 256, 16), ((12, 1), 128, 32), ((6, 1), 64, 64),
                                                  ((3, 1), 256, 16), ((5, 1), 128, 16), ((16, 1), 64, 32)],
                         ids=["tp1", "tp2-d128", "tp4-d64", "tp8", "g5", "g16-d64"])
def test_exchange_matches_the_float64_reference(profile, q_dtype, kv_dtype, heads, head_size, page):
    if profile.tile_n == 64 and head_size == 256:
        pytest.skip("64-key tiles at D=256 take 141 KB of shared memory; covered at smaller heads")
    shape = SparseShape(2, 700, 5, heads[0], heads[1], head_size, topk=300, local_window=64, block_size=page,
                        q_dtype=q_dtype, kv_dtype=kv_dtype, interleave=True)
    check_sparse(shape.build("cuda", seed=next(_seed)).kwargs, profile)


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("splits", [1, 4])
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_exchange_masks_padding_invalid_pages_empty_rows_and_counts_duplicates(splits, kv_dtype):
    check_sparse_masking(dataclasses.replace(EXCHANGE, num_splits=splits), kv_dtype, next(_seed))


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("profile", _PROFILES[:3], ids=lambda p: p.short())
def test_exchange_rescales_only_past_the_slack(profile):
    """Scores that creep up and jump by 30 once (conftest.plant_rising_sparse_scores): tiles within
    the slack keep the stale base (p > 1 exchanged as is), the jump takes the second exchange."""
    kwargs = SparseShape(1, 300, 2, 4, 1, 128, topk=256, local_window=64).build("cuda", seed=next(_seed)).kwargs
    plant_rising_sparse_scores(kwargs, profile.tile_n)
    check_sparse(kwargs, profile)


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
@pytest.mark.parametrize("column", [0, 8, 29])
def test_exchange_rescales_when_one_warp_alone_sees_the_jump(column, kv_dtype):
    """The jump in tile 2's column `column` (columns 8 c .. 8 c + 7 of a tile belong to warp c % 2):
    only that warp's growth passes RESCALE_SLACK, and its vote alone must make both warps rescale
    (conftest.plant_one_key_jump)."""
    kwargs = SparseShape(1, 300, 2, 4, 1, 128, topk=256, local_window=64, kv_dtype=kv_dtype).build(
        "cuda", seed=next(_seed)).kwargs
    plant_one_key_jump(kwargs, 2 * EXCHANGE.tile_n + column)
    check_sparse(kwargs, EXCHANGE)


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("splits", [1, 3])
def test_exchange_fp8_scales_given_as_tensors_match_floats(splits):
    check_sparse_scales_as_tensors(dataclasses.replace(EXCHANGE, num_splits=splits), next(_seed))


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("head_size", [64, 256])
def test_exchange_converts_every_finite_fp8_value_exactly(head_size):
    """One selected key per row, so each output row is that key's V row: V holds every finite e4m3
    byte at even and odd head dimensions, and with v_scale 1 the output must equal the float64
    reference bit for bit (the in-register conversion's byte order and its split by parity)."""
    kwargs = SparseShape(2, 600, 8, 12, 1, head_size, topk=16, local_window=8, kv_dtype="fp8").build(
        "cuda", seed=next(_seed)).kwargs
    finite = torch.tensor([b for b in range(256) if b & 0x7F != 0x7F], dtype=torch.uint8, device="cuda")
    shape = kwargs["v_cache"].shape
    kwargs["v_cache"] = finite[torch.arange(kwargs["v_cache"].numel(), device="cuda") % finite.numel()].view(
        torch.float8_e4m3fn).view(shape)
    chosen = kwargs["indices"].max(dim=1).values
    kwargs["indices"] = torch.full_like(kwargs["indices"], -1)
    kwargs["indices"][:, 0] = chosen
    kwargs["v_scale"] = 1.0
    out = pagedattn.sparse_attention(**kwargs, out=nan_like(kwargs["q"]), profile=EXCHANGE)
    assert torch.count_nonzero(out) > 0
    torch.testing.assert_close(out, reference.sparse_attention(**kwargs).to(out.dtype), rtol=0, atol=0)


@pytest.mark.gpu
@sm90
def test_exchange_reads_v_with_its_own_strides():
    kwargs = SparseShape(2, 400, 3, 12, 2, 128, topk=150, local_window=16).build("cuda", seed=next(_seed)).kwargs
    kwargs["v_cache"] = kwargs["v_cache"].permute(0, 2, 1, 3).contiguous().permute(0, 2, 1, 3)
    assert kwargs["v_cache"].stride() != kwargs["k_cache"].stride()
    check_sparse(kwargs, dataclasses.replace(EXCHANGE, num_splits=2))


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_exchange_reads_k_and_v_interleaved_in_one_cache(kv_dtype):
    check_sparse_interleaved_cache(dataclasses.replace(EXCHANGE, num_splits=2), kv_dtype, next(_seed))


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_caches_the_exchange_kernel_cannot_copy_whole_run_on_the_triton_kernel(kv_dtype):
    """Strides that are not multiples of 16 values: the dispatcher picks a Triton profile and computes
    the right result; the exchange profile given explicitly is refused with the reason (before v25 its
    build failed inside Triton)."""
    kwargs = SparseShape(2, 400, 3, 12, 1, 128, topk=150, local_window=16, kv_dtype=kv_dtype).build(
        "cuda", seed=next(_seed)).kwargs
    kwargs["k_cache"], kwargs["v_cache"] = padded_rows(kwargs["k_cache"]), padded_rows(kwargs["v_cache"])
    chosen = pagedattn.api.choose_sparse_profile(kwargs["q"], kwargs["k_cache"], kwargs["indices"],
                                                 v_cache=kwargs["v_cache"]).profile
    assert not (chosen.shared_exchange or chosen.keys_as_rows)
    check_sparse(kwargs, None)
    with pytest.raises(ValueError, match="16-byte pieces"):
        check_sparse(kwargs, EXCHANGE)


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_exchange_at_real_size(kv_dtype):
    """Top-k 2,051 at D=256 over two 16,384-token requests, TP1 heads, 2,048 rows."""
    kwargs = SparseShape(2, 16384, 1024, 24, 2, 256, kv_dtype=kv_dtype).build("cuda", seed=next(_seed)).kwargs
    check_sparse(kwargs, EXCHANGE)


@pytest.mark.gpu
@sm90
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_exchange_cuda_graph_replay_with_new_selections(kv_dtype):
    """Capture once at fixed shapes; replay after writing new selections, requests and queries."""
    check_sparse_graph_replay(SparseShape(2, 4096, 64, 12, 1, 256, kv_dtype=kv_dtype), next(_seed),
                              dataclasses.replace(EXCHANGE, num_splits=3))
