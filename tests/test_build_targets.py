"""Branches the Triton kernels take by build target (ops/common.py), run by the interpreter.

Two facts of Triton 3.6 shape the kernels' code per target: an sm80 build rejects the e4m3 type
(`fp8e4nv`), so FP8 pages arrive as bytes and are converted by integer operations there
(`compute_values`); and the sm100 build fails on the lazy rescale's reduction of a row vector to a
scalar, so there the test reduces over a 2-D view (`attend_tile`). The kernels ask Triton's
`target_info` which target they are built for; here the interpreter is shown each target in turn,
so every branch runs against the float64 reference on a CPU. The offline builds for sm80 and sm100
are in test_compile.py. (On a GPU these tests skip: a kernel built with a presented target would
stay in Triton's cache under the real target's key.)
"""

import pytest
import torch
from triton.backends.compiler import GPUTarget
from triton.language import target_info

import pagedattn
from pagedattn import LaunchProfile, reference
from pagedattn.interpreter import interpreter_active
from pagedattn.workloads import SparseShape, UnifiedShape
from conftest import assert_close_to_reference, nan_like, plant_rising_scores, plant_rising_sparse_scores

pytestmark = pytest.mark.skipif(not interpreter_active(), reason="presents build targets to the interpreter")

_seed = iter(range(50_000, 1_000_000))
TARGETS = {"sm80": GPUTarget("cuda", 80, 32), "sm90": GPUTarget("cuda", 90, 32), "sm100": GPUTarget("cuda", 100, 32)}
UNIFIED_PROFILES = [LaunchProfile(64, 16, 1), LaunchProfile(64, 32, 3, kv_major=True, addresses_ahead=True)]
SPARSE_PROFILES = [LaunchProfile(16, 16, 1), LaunchProfile(16, 32, 2, kv_major=True, addresses_ahead=True)]
FINITE_E4M3 = torch.tensor([b for b in range(256) if b & 0x7F != 0x7F], dtype=torch.uint8)


@pytest.fixture(params=list(TARGETS))
def target(request, monkeypatch) -> str:
    monkeypatch.setattr(target_info, "current_target", lambda: TARGETS[request.param])
    return request.param


@pytest.mark.parametrize("profile", UNIFIED_PROFILES, ids=[p.short() for p in UNIFIED_PROFILES])
def test_unified_fp8_verify_and_decode(target, profile):
    kwargs = UnifiedShape((4, 1, 4), (45, 70, 4), 16, 1, 32, 16, kv_dtype="fp8").build("cpu", seed=next(_seed)).kwargs
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(out, reference.unified_attention(**kwargs))


@pytest.mark.parametrize("profile", SPARSE_PROFILES, ids=[p.short() for p in SPARSE_PROFILES])
def test_sparse_fp8(target, profile):
    kwargs = SparseShape(2, 200, 3, 8, 1, 32, topk=40, local_window=8, kv_dtype="fp8").build(
        "cpu", seed=next(_seed)).kwargs
    out = pagedattn.sparse_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(out, reference.sparse_attention(**kwargs))


@pytest.mark.parametrize("profile", UNIFIED_PROFILES, ids=[p.short() for p in UNIFIED_PROFILES])
def test_unified_rising_scores_rescale_only_past_the_slack(target, profile):
    """Both paths of the lazy rescale (conftest.plant_rising_scores) under each target's test."""
    kwargs = UnifiedShape((4, 2), (192, 150), 8, 1, 32, 16).build("cpu", seed=next(_seed)).kwargs
    plant_rising_scores(kwargs, profile.tile_n)
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(out, reference.unified_attention(**kwargs))


def test_sparse_rising_scores_rescale_only_past_the_slack(target):
    profile = SPARSE_PROFILES[1]
    kwargs = SparseShape(1, 400, 3, 8, 1, 32, topk=256, local_window=64).build("cpu", seed=next(_seed)).kwargs
    plant_rising_sparse_scores(kwargs, profile.tile_n)
    out = pagedattn.sparse_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(out, reference.sparse_attention(**kwargs))


@pytest.mark.parametrize("kv_major", [False, True])
def test_every_finite_e4m3_value_converts_exactly(target, kv_major):
    """One key per sequence, so each output row is that key's V row (times v_scale 1): the read V rows
    hold every finite e4m3 byte, and the output must equal the float64 reference bit for bit."""
    shape = UnifiedShape((1,) * 4, (1,) * 4, 4, 2, 64, 16, kv_dtype="fp8")
    kwargs = shape.build("cpu", seed=next(_seed)).kwargs | {"v_scale": 1.0}
    rows = FINITE_E4M3.repeat(4)[:4 * 2 * 64].view(4, 2, 64)
    v_bytes = kwargs["v_cache"].view(torch.uint8)
    for seq in range(4):
        v_bytes[int(kwargs["block_table"][seq, 0]), 0] = rows[seq]
    profile = LaunchProfile(16, 16, 1, kv_major=kv_major)
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    torch.testing.assert_close(out, reference.unified_attention(**kwargs).to(out.dtype), rtol=0, atol=0)
