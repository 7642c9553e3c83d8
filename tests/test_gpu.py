"""Real-size checks on a CUDA GPU: the named workloads vs the float64 reference with the dispatcher's
profile, and CUDA-graph capture/replay with new lengths, tables and selections."""

import pytest
import torch

import pagedattn
from pagedattn import reference
from pagedattn.ops.unified import unified_attention_kernel
from pagedattn.profiles.types import LaunchProfile
from pagedattn.workloads import WORKLOADS, SparseShape, make_paged_cache
from conftest import assert_close_to_reference, check_sparse_graph_replay, check_unified_graph_replay, nan_like

pytestmark = pytest.mark.gpu

_REAL_CASES = [
    case
    for name, keep in (
        ("mtp-verify", "kv=8192"), ("mtp-verify", "kv=32768 16q/1kv d256 fp8"), ("gqa-decode", "kv=4096"),
        ("gqa-verify", "kv=4096"), ("long-request", ""), ("mixed-batch", ""), ("dense-prefill", ""),
        ("sparse-prefill", "rows=520"), ("sparse-prefill", "rows=8192 24q/2kv"), ("sparse-decode", ""),
    )
    for case in WORKLOADS[name].cases
    if keep in case.label
]


def _check_against_reference(case, seed: int, profile: LaunchProfile | None = None) -> None:
    kwargs = case.build("cuda", seed=seed).kwargs
    fn = pagedattn.unified_attention if case.shape.kernel == "unified" else pagedattn.sparse_attention
    out = fn(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(out, getattr(reference, f"{case.shape.kernel}_attention")(**kwargs))


@pytest.mark.parametrize("case", _REAL_CASES, ids=[c.label for c in _REAL_CASES])
def test_named_workload_matches_reference(case):
    _check_against_reference(case, seed=11)


_DEEP_PIPELINE = [  # num_stages 5: the K/V copies of two tiles stay in flight (docs/perf-notes.md v4)
    ("mtp-verify", "kv=8192 16q/1kv d256 fp8", LaunchProfile(64, 64, 6, 4, 5)),
    ("mtp-verify", "kv=8192 32q/2kv d256 bf16", LaunchProfile(64, 64, 3, 4, 5)),
    ("gqa-decode", "kv=4096", LaunchProfile(16, 32, 1, 4, 5)),
    ("sparse-prefill", "rows=520 24q/2kv d256 bf16", LaunchProfile(16, 32, 1, 2, 5)),
]


@pytest.mark.parametrize("workload,label,profile", _DEEP_PIPELINE, ids=[f"{w}-{p.short()}" for w, _, p in _DEEP_PIPELINE])
def test_deep_pipeline_profiles_match_reference(workload, label, profile):
    (case,) = [c for c in WORKLOADS[workload].cases if label in c.label]
    _check_against_reference(case, seed=12, profile=profile)


def test_unified_cuda_graph_replay_with_new_lengths_and_tables():
    """Capture once at fixed shapes; replay after writing new seq_lens and block tables in place."""
    check_unified_graph_replay("fp8", seed=5)


def test_sparse_cuda_graph_replay_with_new_selections():
    """The dispatcher's choice (TP1 heads, FP8 pages, 128 rows): captured once, replayed with new selections."""
    check_sparse_graph_replay(SparseShape(2, 4096, 64, 24, 2, 256, kv_dtype="fp8"), seed=3)


def test_new_batch_sizes_reuse_the_compiled_kernel():
    """Serving changes the sequence and token counts every step: 1, 16 and 17 sequences (a count Triton
    would specialise as ==1, %16 or neither) must all run the kernel compiled for the first batch."""
    gen = torch.Generator(device="cuda").manual_seed(9)
    profile = LaunchProfile(block_m=16, tile_n=32, num_splits=1, num_warps=4, num_stages=2)
    compiled = unified_attention_kernel.device_caches[torch.cuda.current_device()][0]
    counts = []
    for batch in (17, 1, 16):
        lens = [300 + 7 * i for i in range(batch)]  # the block table's width changes with the batch too
        cache = make_paged_cache(lens, 2, 128, 16, "bf16", "cuda", gen)
        q = torch.randn(batch, 8, 128, device="cuda", generator=gen).bfloat16()
        call = dict(cu_seqlens_q=torch.arange(batch + 1, dtype=torch.int32, device="cuda"),
                    seq_lens=torch.tensor(lens, dtype=torch.int32, device="cuda"),
                    block_table=cache.block_table, max_seqlen_q=1, max_seqlen_k=max(lens))
        out = pagedattn.unified_attention(q, cache.k_cache, cache.v_cache, **call, profile=profile, out=nan_like(q))
        assert_close_to_reference(out, reference.unified_attention(q, cache.k_cache, cache.v_cache, **call))
        counts.append(len(compiled))
    assert counts[1:] == counts[:1] * 2, f"kernel variants after each batch size: {counts}"
