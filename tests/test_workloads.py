"""Input builders and named workloads: shapes, page tables, FP8 quantisation, work formulas and
top-k selections. Only the tiny cases are built; full-size cases are checked as dataclasses."""

import numpy as np
import pytest
import torch

from pagedattn import workloads as wl
from pagedattn.workloads import SparseShape, UnifiedShape

TINY = [(w, c) for w in wl.WORKLOADS.values() for c in w.tiny]
TINY_UNIFIED = [pytest.param(c, id=f"{w.name}:{c.label}") for w, c in TINY if w.kernel == "unified"]
TINY_SPARSE = [pytest.param(c, id=f"{w.name}:{c.label}") for w, c in TINY if w.kernel == "sparse"]


def _cpu_gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def assert_shuffled_partition(block_table: torch.Tensor, lengths, block_size: int, num_blocks: int, spare: int = 0):
    """Each sequence's needed pages are distinct across the batch, cover every non-spare page
    and do not come in identity order."""
    needed = torch.cat([block_table[i, : wl.cdiv(n, block_size)] for i, n in enumerate(lengths)])
    assert num_blocks == needed.numel() + spare
    assert needed.unique().numel() == needed.numel(), "a page is shared by two sequences or reused"
    assert bool(((needed >= 0) & (needed < num_blocks)).all())
    assert not torch.equal(needed, torch.arange(needed.numel(), dtype=needed.dtype)), "pages are not shuffled"


# ----------------------------------------------------------------------------- named workloads


def test_every_workload_has_tiny_cases_of_its_kernel():
    assert set(wl.WORKLOADS) == {
        "mtp-verify", "gqa-decode", "gqa-verify", "long-request", "mixed-batch", "dense-prefill",
        "sparse-prefill", "sparse-decode",
    }
    for name, workload in wl.WORKLOADS.items():
        assert workload.name == name and workload.tiny and workload.cases
        assert {c.shape.kernel for c in workload.cases + workload.tiny} == {workload.kernel}


@pytest.mark.parametrize("case", TINY_UNIFIED)
def test_tiny_unified_case_builds_with_the_declared_shapes(case):
    s: UnifiedShape = case.shape
    inputs = case.build("cpu", seed=3)
    kw = inputs.kwargs
    tokens, pages = sum(s.query_lens), [wl.cdiv(n, s.block_size) for n in s.kv_lens]
    assert all(n <= kv for n, kv in zip(s.query_lens, s.kv_lens))
    assert kw["q"].shape == (tokens, s.num_q_heads, s.head_size) and kw["q"].dtype == wl.DTYPES[s.q_dtype]
    for name in ("k_cache", "v_cache"):
        assert kw[name].shape == (sum(pages), s.block_size, s.num_kv_heads, s.head_size)
        assert kw[name].dtype == wl.DTYPES[s.kv_dtype]
    assert kw["cu_seqlens_q"].dtype == torch.int32
    assert kw["cu_seqlens_q"].tolist() == [0, *np.cumsum(s.query_lens).tolist()]
    assert kw["seq_lens"].dtype == torch.int32 and kw["seq_lens"].tolist() == list(s.kv_lens)
    assert kw["block_table"].dtype == torch.int32 and kw["block_table"].shape == (len(s.kv_lens), max(pages))
    assert kw["max_seqlen_q"] == max(s.query_lens) and kw["max_seqlen_k"] == max(s.kv_lens)
    if s.kv_dtype == "fp8":
        assert all(isinstance(kw[n], float) and kw[n] > 0 for n in ("k_scale", "v_scale"))
    else:
        assert kw["k_scale"] is None and kw["v_scale"] is None
    assert (inputs.bytes_moved, inputs.flops) == (s.bytes_moved(), s.flops())
    if len(s.kv_lens) > 1 or pages[0] > 1:
        assert_shuffled_partition(kw["block_table"], s.kv_lens, s.block_size, sum(pages))


@pytest.mark.parametrize("case", TINY_SPARSE)
def test_tiny_sparse_case_builds_with_the_declared_shapes(case):
    s: SparseShape = case.shape
    inputs = case.build("cpu", seed=4)
    kw = inputs.kwargs
    pages = wl.cdiv(s.request_len, s.block_size)
    assert kw["q"].shape == (s.rows, s.num_q_heads, s.head_size) and kw["q"].dtype == wl.DTYPES[s.q_dtype]
    for name in ("k_cache", "v_cache"):
        assert kw[name].shape == (s.num_requests * pages, s.block_size, s.num_kv_heads, s.head_size)
        assert kw[name].dtype == wl.DTYPES[s.kv_dtype]
    assert kw["indices"].shape == (s.rows, s.topk) and kw["indices"].dtype == torch.int32
    assert bool(((kw["indices"] >= -1) & (kw["indices"] < s.request_len)).all())
    assert kw["token_to_req"].dtype == torch.int32
    assert sorted(kw["token_to_req"].tolist()) == sorted(list(range(s.num_requests)) * s.rows_per_request)
    assert kw["block_table"].shape == (s.num_requests, pages) and kw["block_table"].dtype == torch.int32
    assert_shuffled_partition(kw["block_table"], [s.request_len] * s.num_requests, s.block_size, s.num_requests * pages)
    if s.kv_dtype == "fp8":
        assert all(isinstance(kw[n], float) and kw[n] > 0 for n in ("k_scale", "v_scale"))
    # bytes_moved counts exactly the valid slots the builder produced
    kv_bytes, q_bytes = wl.DTYPES[s.kv_dtype].itemsize, wl.DTYPES[s.q_dtype].itemsize
    valid = int((kw["indices"] >= 0).sum())
    kv_moved = 2 * valid * s.num_kv_heads * s.head_size * kv_bytes
    assert inputs.bytes_moved == kv_moved + 2 * s.rows * s.num_q_heads * s.head_size * q_bytes
    assert inputs.flops == 4 * valid * s.num_q_heads * s.head_size


def _unified_layouts(name):
    return {(c.shape.num_q_heads, c.shape.num_kv_heads, c.shape.head_size) for c in wl.get_workload(name).cases}


def test_full_mtp_verify_cases_are_the_sglang_shape():
    cases = wl.get_workload("mtp-verify").cases
    assert _unified_layouts("mtp-verify") == {(16, 1, 256), (32, 2, 256)}
    assert {c.shape.kv_dtype for c in cases} == {"fp8", "bf16"}
    assert {c.shape.kv_lens[0] for c in cases} == {8192, 32768, 70000}
    for c in cases:
        s = c.shape
        assert s.query_lens == (4,) * 20 and len(set(s.kv_lens)) == 1
        assert (s.group, s.block_size, s.q_dtype, s.max_seqlen_q) == (16, 16, "bf16", 4)


@pytest.mark.parametrize("name,batch,q", [("gqa-decode", 64, 1), ("gqa-verify", 64, 4), ("dense-prefill", 4, 8192)])
def test_full_gqa_cases(name, batch, q):
    assert _unified_layouts(name) == {(32, 8, 128)}
    for c in wl.get_workload(name).cases:
        assert c.shape.query_lens == (q,) * batch and c.shape.kv_dtype == "bf16"
        assert min(c.shape.kv_lens) >= q


def test_full_long_request_cases_are_one_sequence_of_128k():
    cases = wl.get_workload("long-request").cases
    assert {(c.shape.query_lens, c.shape.kv_lens) for c in cases} == {((1,), (131072,)), ((4,), (131072,))}
    assert {(c.shape.group, c.shape.head_size, c.shape.kv_dtype) for c in cases} == {(4, 128, "bf16"), (16, 256, "fp8")}


def test_full_mixed_batch_holds_prefill_decode_and_verify():
    for c in wl.get_workload("mixed-batch").cases:
        q = np.array(c.shape.query_lens)
        assert ((q > 4).sum(), (q == 1).sum(), (q == 4).sum()) == (4, 48, 16)
        assert all(n <= kv for n, kv in zip(c.shape.query_lens, c.shape.kv_lens))


def test_tiny_mixed_batch_shrinks_queries_and_keys_by_16():
    # every 16th sequence of the full batch, query and KV lengths / 16 (decode and verify keep q)
    for c in wl.get_workload("mixed-batch").tiny:
        assert c.shape.query_lens == (64, 1, 1, 1, 4)
        assert c.shape.kv_lens == (4096 // 16, 8704 // 16, 18944 // 16, 29184 // 16, 23552 // 16)


def test_full_sparse_prefill_cases_are_the_vllm_tp_shapes():
    cases = wl.get_workload("sparse-prefill").cases
    layouts = {(c.shape.num_q_heads, c.shape.num_kv_heads) for c in cases}
    assert layouts == {(24, 2), (12, 1), (6, 1), (3, 1)}
    assert {c.shape.rows for c in cases} == {520, 8192}
    assert {c.shape.kv_dtype for c in cases} == {"bf16", "fp8"}
    for c in cases:
        s = c.shape
        assert (s.topk, s.local_window, s.head_size, s.block_size, s.request_len) == (2051, 512, 256, 16, 16384)
        assert f"rows={s.rows}" in c.label


def test_full_sparse_decode_cases_have_one_row_per_request():
    for c in wl.get_workload("sparse-decode").cases:
        s = c.shape
        assert (s.num_requests, s.rows_per_request, s.request_len, s.topk) == (64, 1, 32768, 2051)
        assert s.group in (12, 3)


def test_get_workload_rejects_unknown_names():
    assert wl.get_workload("gqa-decode") is wl.WORKLOADS["gqa-decode"]
    with pytest.raises(ValueError, match="unknown workload 'nope'"):
        wl.get_workload("nope")


def test_with_rows_resizes_a_sparse_case():
    case = wl.get_workload("sparse-prefill").cases[0]
    assert case.shape.rows == 520
    bigger = wl.with_rows(case, 8192)
    assert bigger.shape.rows == 8192 and "rows=8192" in bigger.label and "rows=520" not in bigger.label
    assert bigger.shape == SparseShape(**{**vars(case.shape), "rows_per_request": 4096})
    assert wl.with_rows(case, 7).shape.rows == 8  # rounded up to whole requests
    assert wl.with_rows(case, 10**6).shape.rows_per_request == case.shape.request_len  # capped


def test_with_rows_rejects_unified_cases():
    with pytest.raises(TypeError):
        wl.with_rows(wl.get_workload("gqa-decode").cases[0], 16)


@pytest.mark.parametrize("shape", [
    UnifiedShape((5,), (3,), 4, 2, 32),
    SparseShape(1, 10, 11, 4, 2, 32, topk=8, local_window=2),
    SparseShape(1, 10, 2, 4, 2, 32, topk=4, local_window=5),
])
def test_build_rejects_impossible_shapes(shape):
    with pytest.raises(ValueError):
        shape.build("cpu")


def test_interleaved_sparse_rows_alternate_requests():
    base = SparseShape(3, 50, 4, 4, 2, 32, topk=16, local_window=4)
    runs = base.build("cpu", seed=9).kwargs
    mixed = SparseShape(**{**vars(base), "interleave": True}).build("cpu", seed=9).kwargs
    assert runs["token_to_req"].tolist() == [0] * 4 + [1] * 4 + [2] * 4
    assert mixed["token_to_req"].tolist() == [0, 1, 2] * 4
    order = [r * 4 + i for i in range(4) for r in range(3)]  # row i of request r
    assert torch.equal(mixed["indices"], runs["indices"][order])


# ----------------------------------------------------------------------------- cache builder


@pytest.mark.parametrize("kv_dtype", ["bf16", "fp16", "fp8"])
def test_make_paged_cache_assigns_each_sequence_its_own_shuffled_pages(kv_dtype):
    lengths, bs, spare = [33, 16, 1, 70, 48], 16, 3
    cache = wl.make_paged_cache(lengths, 2, 32, bs, kv_dtype, "cpu", _cpu_gen(0), spare_blocks=spare)
    pages = [wl.cdiv(n, bs) for n in lengths]  # 3, 1, 1, 5, 3
    assert cache.k_cache.shape == (sum(pages) + spare, bs, 2, 32) and cache.k_cache.dtype == wl.DTYPES[kv_dtype]
    assert cache.block_table.shape == (5, 5) and cache.block_table.dtype == torch.int32
    assert_shuffled_partition(cache.block_table, lengths, bs, cache.k_cache.shape[0], spare)
    assert not torch.equal(cache.k_cache.float(), cache.v_cache.float())
    if kv_dtype == "fp8":
        assert all(isinstance(s, float) and s > 0 for s in (cache.k_scale, cache.v_scale))
        assert cache.k_cache.float().abs().max() == wl.FP8_MAX  # the largest value maps to e4m3's max
    else:
        assert cache.k_scale is None and cache.v_scale is None


@pytest.mark.parametrize("magnitude", [1e-3, 1.0, 300.0])
def test_quantize_fp8_round_trips_within_e4m3_precision(magnitude):
    x = (torch.randn(4096, generator=_cpu_gen(1)) * magnitude).to(torch.bfloat16)
    x8, scale = wl.quantize_fp8(x)
    assert x8.dtype == torch.float8_e4m3fn and isinstance(scale, float) and scale > 0
    assert scale == pytest.approx(float(x.float().abs().max()) / wl.FP8_MAX)
    back = x8.float() * scale
    # e4m3: 3 mantissa bits -> half an ulp is 2^-4 relative; subnormal spacing 2^-9 -> 2^-10 absolute
    bound = 2.0**-4 * x.float().abs() + 2.0**-10 * scale
    assert bool(((back - x.float()).abs() <= bound).all())
    assert (back - x.float()).abs().max() > 0  # it is a real quantisation, not a copy


# ----------------------------------------------------------------------------- work formulas


@pytest.mark.parametrize("shape,bytes_moved,flops", [
    # seq0: 3 queries at positions 2,3,4 of 5 keys -> 3+4+5 = 12 pairs; seq1: position 3 of 4 -> 4.
    # KV 2*(5+4) tokens * 2 heads * 8 * 1 B (fp8) = 288; Q+out 2 * 4 tokens * 4 heads * 8 * 2 B = 512.
    (UnifiedShape((3, 1), (5, 4), 4, 2, 8, kv_dtype="fp8"), 288 + 512, 4 * 16 * 4 * 8),
    # bf16 KV doubles the KV bytes: 576.
    (UnifiedShape((3, 1), (5, 4), 4, 2, 8), 576 + 512, 4 * 16 * 4 * 8),
    # window 2: seq0 reads keys 1..4 (4), pairs 2+2+2; seq1 reads keys 2..3 (2), pairs 2 -> 6 read, 8 pairs.
    (UnifiedShape((3, 1), (5, 4), 4, 2, 8, kv_dtype="fp8", sliding_window=2), 2 * 6 * 2 * 8 + 512, 4 * 8 * 4 * 8),
    # window 4: seq0 reads all 5, pairs 3+4+4; seq1 reads all 4, pairs 4 -> 9 read, 15 pairs.
    (UnifiedShape((3, 1), (5, 4), 4, 2, 8, kv_dtype="fp8", sliding_window=4), 288 + 512, 4 * 15 * 4 * 8),
    # sparse: rows at positions 7, 8, 9 with topk 9 -> 8 + 9 + 9 = 26 valid slots per request, 52 total.
    # KV 2 * 52 * 2 heads * 8 * 2 B = 3328; Q+out 2 * 6 rows * 4 heads * 8 * 2 B = 768.
    (SparseShape(2, 10, 3, 4, 2, 8, topk=9, local_window=2), 3328 + 768, 4 * 52 * 4 * 8),
])
def test_bytes_and_flops_match_hand_counts(shape, bytes_moved, flops):
    assert shape.bytes_moved() == bytes_moved
    assert shape.flops() == flops


# ----------------------------------------------------------------------------- selections


def _selection(positions, topk=16, local=4, overlap=0.5, seed=0):
    return wl.make_selection(np.asarray(positions), topk, local, overlap, np.random.default_rng(seed))


@pytest.mark.parametrize("overlap", [0.0, 0.5, 1.0])
def test_make_selection_rows_are_sorted_local_unique_and_causal(overlap):
    topk, local = 16, 4
    positions = np.arange(0, 80)  # rows 0..14 see fewer than topk tokens, 15 sees exactly topk
    sel = _selection(positions, topk, local, overlap)
    assert sel.shape == (80, topk) and sel.dtype == np.int32
    for pos, row in zip(positions, sel):
        valid = row[row >= 0]
        pad = row[len(valid):]
        assert (pad == -1).all(), "padding comes last"
        assert len(pad) == max(0, topk - (pos + 1)), "pads only when fewer than topk tokens are visible"
        assert (np.diff(valid) > 0).all(), "sorted ascending, no duplicates"
        assert valid.max() == pos and valid.min() >= 0
        assert set(range(max(0, pos + 1 - local), pos + 1)) <= set(valid.tolist()), "local window"
        if pos + 1 <= topk:
            assert valid.tolist() == list(range(pos + 1))


def _non_local(sel: np.ndarray, positions: np.ndarray, local: int) -> list[set]:
    return [set(row[row <= pos - local].tolist()) for pos, row in zip(positions, sel)]


@pytest.mark.parametrize("overlap", [0.0, 0.5, 0.9, 1.0])
def test_make_selection_overlap_between_neighbouring_rows(overlap):
    topk, local = 64, 16
    n_early = topk - local
    positions = np.arange(200, 400)
    sel = _selection(positions, topk, local, overlap, seed=1)
    early = _non_local(sel, positions, local)
    assert all(len(e) == n_early for e in early)
    kept = round(overlap * n_early)
    measured, expected = [], []
    for i in range(1, len(positions)):
        measured.append(len(early[i] & early[i - 1]) / n_early)
        # a fresh draw hits one of the previous row's remaining early tokens by chance
        pool = positions[i] + 1 - local - kept
        chance = (n_early - kept) / pool
        expected.append(overlap + (1 - overlap) * chance)
    assert np.mean(measured) == pytest.approx(np.mean(expected), abs=0.015)
    if overlap == 1.0:
        assert all(early[i] == early[0] for i in range(len(early)))


@pytest.mark.parametrize("overlap", [-0.1, 1.5])
def test_make_selection_rejects_invalid_overlap(overlap):
    with pytest.raises(ValueError, match="overlap"):
        _selection([20, 21], overlap=overlap)

