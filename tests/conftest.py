"""Test harness: device selection, the interpreter patch, markers and shared helpers.

Without a CUDA device, `import pagedattn` selects Triton's interpreter (TRITON_INTERPRET=1) before
any kernel is defined and patches the interpreter's bf16/fp8 `tl.dot` (see pagedattn/interpreter.py);
`test_interpreter.py` proves the patch. Tests marked `gpu` are skipped there.
"""

import pytest
import torch

import pagedattn  # selects the interpreter and patches its dot on CPU machines
from pagedattn import reference
from pagedattn.interpreter import interpreter_active, patch_interpreter_dot
from pagedattn.profiles import tables
from pagedattn.workloads import make_paged_cache

if interpreter_active():
    patch_interpreter_dot()

HAS_CUDA = torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if HAS_CUDA:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def device() -> str:
    return "cuda" if HAS_CUDA else "cpu"


@pytest.fixture
def no_tuned_tables(tmp_path_factory, monkeypatch):
    """Point table lookups at an empty folder so shipped tables cannot change what is selected
    (modules that test the dispatcher use it for every test: `pytest.mark.usefixtures`)."""
    monkeypatch.setattr(tables, "TABLE_DIR", tmp_path_factory.getbasetemp() / "no-tables")
    tables.clear_cache()
    yield
    tables.clear_cache()


def nan_like(t: torch.Tensor) -> torch.Tensor:
    """An output buffer pre-filled with NaN, so an element the kernel never writes fails the check."""
    return torch.full_like(t, float("nan"))


rel_l2 = reference.rel_l2  # tests import it from here


def assert_close_to_reference(out: torch.Tensor, ref: torch.Tensor, bound: float = 1e-2) -> None:
    assert not torch.isnan(out).any(), "output has NaN: an element was not written"
    err = rel_l2(out, ref)
    assert err < bound, f"rel-L2 {err:.3e} >= {bound:.0e}"


def check_unified_graph_replay(kv_dtype: str, seed: int, profile=None) -> None:
    """Capture one unified verify call (8 sequences x 4 draft tokens, 16q/1kv, D=256, pages of 16,
    up to 3,000 keys) at fixed shapes with `profile` (None: the dispatcher's); replay it three times
    after writing new sequence lengths, block tables and queries in place, each replay against the
    float64 reference. CUDA only."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    batch, q_len, capacity = 8, 4, 3000
    cache = make_paged_cache([capacity] * batch, 1, 256, 16, kv_dtype, "cuda", gen)
    q = torch.randn(batch * q_len, 16, 256, device="cuda", generator=gen).bfloat16()
    seq_lens = torch.full((batch,), capacity, dtype=torch.int32, device="cuda")
    table = cache.block_table.clone()
    inputs = dict(cu_seqlens_q=torch.arange(0, batch * q_len + 1, q_len, dtype=torch.int32, device="cuda"),
                  seq_lens=seq_lens, block_table=table, max_seqlen_q=q_len, max_seqlen_k=capacity,
                  k_scale=cache.k_scale, v_scale=cache.v_scale)
    out = torch.empty_like(q)
    pagedattn.unified_attention(q, cache.k_cache, cache.v_cache, **inputs, out=out, profile=profile)  # compile first
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        pagedattn.unified_attention(q, cache.k_cache, cache.v_cache, **inputs, out=out, profile=profile)
    for _ in range(3):
        seq_lens.copy_(torch.randint(q_len, capacity + 1, (batch,), device="cuda", generator=gen, dtype=torch.int32))
        table.copy_(table[torch.randperm(batch, device="cuda", generator=gen)])
        q.copy_(torch.randn(q.shape, device="cuda", generator=gen))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert_close_to_reference(out, reference.unified_attention(q, cache.k_cache, cache.v_cache, **inputs))
