"""Test harness: device selection, the interpreter patch, markers and shared helpers.

Without a CUDA device, `import pagedattn` selects Triton's interpreter (TRITON_INTERPRET=1) before
any kernel is defined and patches the interpreter's bf16/fp8 `tl.dot` (see pagedattn/interpreter.py);
`test_interpreter.py` proves the patch. Tests marked `gpu` are skipped there.
"""

import dataclasses

import pytest
import torch

import pagedattn  # selects the interpreter and patches its dot on CPU machines
from pagedattn import reference
from pagedattn.interpreter import interpreter_active, patch_interpreter_dot
from pagedattn.ops.common import RESCALE_SLACK
from pagedattn.profiles import select, tables
from pagedattn.workloads import SparseShape, UnifiedShape, make_paged_cache

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


def check_shape_refusal(profile, key, needle: str, device) -> None:
    """`profile` cannot compute `key`: the profile layer names why (`needle` in the reason) and an
    explicit `profile=` for it is an error."""
    problem = select.shape_problem(profile, key)
    assert problem is not None and needle in problem
    with pytest.raises(ValueError, match="cannot run"):
        select.select_profile(key, device, profile)


def check_refused_off_hopper(profile, key, device, needle: str, hopper) -> None:
    """A Gluon kernel's profile on a device other than sm90: the reason names `needle`, an explicit
    `profile=` is an error naming it too, and the same profile is fine on `hopper`."""
    assert needle in select.device_problem(profile, device)
    with pytest.raises(ValueError, match=needle):
        select.select_profile(key, device, profile)
    assert select.device_problem(profile, hopper) is None


def _max_growth(q_rows: torch.Tensor, keys: torch.Tensor, tile_n: int) -> list[float]:
    """Per tile of `keys` (in the order a kernel walks them) after the first: how far the tile raises
    the running maximum score (log2 units) over the query rows `q_rows` [rows, heads, D], the amount
    that decides whether the kernel rescales."""
    scores = torch.einsum("thd,kd->thk", q_rows.double(), keys.double()).amax((0, 1))
    scores = scores * q_rows.shape[2] ** -0.5 * 1.4426950408889634
    running = [float(t.max()) for t in scores.split(tile_n)]
    return [max(0.0, b - max(running[:i + 1])) for i, b in enumerate(running[1:])]


def _plant_rising_keys(q: torch.Tensor, k_cache: torch.Tensor, table_row: torch.Tensor, length: int, slope: float,
                       jump_at: int):
    """KV head 0's keys at positions 0..length-1 of one block-table row: q . k scaled to log2 units
    rises by `slope` per position, plus 30 from position `jump_at` on (q must be ~1)."""
    head, page = q.shape[2], k_cache.shape[1]
    pos = torch.arange(length, device=q.device)
    rise = slope * pos + 30.0 * (pos >= jump_at)  # target score of each key, log2 units
    per_unit = rise * (head ** -0.5 / 1.4426950408889634)  # q ~ 1: q.k x head**-0.5 x log2(e) = rise
    k_cache[table_row[pos // page].long(), pos % page, 0] = (
        per_unit[:, None] + 0.01 * torch.randn(length, head, device=q.device)).to(k_cache.dtype)


def _check_rising_premises(growth: list[float]) -> None:
    slack = RESCALE_SLACK.value
    assert max(growth) > 2 * slack, growth  # past any stale base: a rescale
    assert any(0.0 < g < slack / 2 for g in growth), growth  # within the slack: no rescale, p > 1


def plant_rising_scores(kwargs: dict, tile_n: int, slope: float = 0.05, jump_at: int = 64) -> None:
    """Rewrite q and KV head 0's keys of unified inputs (one KV head) so that scores rise by ~`slope`
    per key (log2 units) with a jump of 30 at key `jump_at`: the running maximum grows a little on
    most tiles (a lazily rescaling kernel keeps its stale exponent base, p > 1) and far past
    RESCALE_SLACK on one (it must rescale O and l). Checks both premises on sequence 0 (a tile of
    `tile_n` keys must rise by under RESCALE_SLACK / 2, and the jump must fall after the first tile)."""
    q, k_cache, table = kwargs["q"], kwargs["k_cache"], kwargs["block_table"]
    q.copy_(1.0 + 0.01 * torch.randn_like(q))  # q . 1 ~ head for every row
    for seq, kv_len in enumerate(kwargs["seq_lens"].tolist()):
        _plant_rising_keys(q, k_cache, table[seq], kv_len, slope, jump_at)
    kv_len, page = int(kwargs["seq_lens"][0]), k_cache.shape[1]
    pos = torch.arange(kv_len, device=q.device)
    keys = k_cache[table[0, pos // page].long(), pos % page, 0]
    _check_rising_premises(_max_growth(q[:int(kwargs["cu_seqlens_q"][1])], keys, tile_n))


def plant_rising_sparse_scores(kwargs: dict, tile_n: int) -> None:
    """The same for sparse inputs (one KV head): keys rise by 0.02 per position with the jump at
    position 160 (past the first 64-slot tile of a dense selection), over every position of every request's block-table row; a row walks its selected
    positions in slot order, so with ascending selections (SparseShape) its running maximum grows a
    little per tile and jumps once. Checks both premises on row 0."""
    q, k_cache, table, indices = kwargs["q"], kwargs["k_cache"], kwargs["block_table"], kwargs["indices"]
    page = k_cache.shape[1]
    q.copy_(1.0 + 0.01 * torch.randn_like(q))
    for req in range(table.shape[0]):
        _plant_rising_keys(q, k_cache, table[req], table.shape[1] * page, 0.02, 160)
    pos = indices[0][indices[0] >= 0].long()
    keys = k_cache[table[int(kwargs["token_to_req"][0]), pos // page].long(), pos % page, 0]
    _check_rising_premises(_max_growth(q[:1], keys, tile_n))


def _raise_one_key(q: torch.Tensor, k_cache: torch.Tensor, blocks: torch.Tensor, slots: torch.Tensor) -> None:
    """q ~ 1, keys of KV head 0 within ~+-1 of each other in score, and the keys at (blocks, slots)
    scoring ~30 (log2 units) above them: a decision that misses the kernel warp holding such a key
    leaves its p ~ 2^30, past fp16's range."""
    head = q.shape[2]
    q.copy_(1.0 + 0.01 * torch.randn_like(q))
    k_cache.copy_((0.05 * torch.randn(k_cache.shape, device=k_cache.device)).to(k_cache.dtype))
    per_unit = 30.0 * head ** -0.5 / 1.4426950408889634  # q ~ 1: q . k x head**-0.5 x log2(e) = 30
    k_cache[blocks.long(), slots.long(), 0] = torch.full((head,), per_unit, device=k_cache.device).to(k_cache.dtype)


def plant_one_key_jump(kwargs: dict, slot: int) -> None:
    """Sparse inputs (one KV head): each row's key in `slot` of its selections jumps (`_raise_one_key`),
    so the tile that holds the slot raises the running maximum past RESCALE_SLACK in one kernel warp
    only, whichever owns that key."""
    page = kwargs["k_cache"].shape[1]
    pos = kwargs["indices"][:, slot].long()
    assert bool((pos >= 0).all())
    blocks = kwargs["block_table"][kwargs["token_to_req"].long(), pos // page]
    _raise_one_key(kwargs["q"], kwargs["k_cache"], blocks, pos % page)


def plant_one_unified_key_jump(kwargs: dict, position: int) -> None:
    """Unified inputs (one KV head): every sequence's key at `position` jumps (`_raise_one_key`)."""
    page = kwargs["k_cache"].shape[1]
    assert bool((kwargs["seq_lens"] > position).all())
    blocks = kwargs["block_table"][:, position // page]
    _raise_one_key(kwargs["q"], kwargs["k_cache"], blocks, torch.full_like(blocks, position % page))


def poison_past_lengths(kwargs: dict) -> None:
    """Fill the slots past each sequence's length in its last page with NaN bit patterns (0xFF: NaN
    in e4m3, and in bf16 / fp16 pairs), in both caches. Whatever a kernel copies with those pages
    must stay out of its result (0 x NaN in P.V is NaN). The pages belong to one sequence each."""
    page = kwargs["k_cache"].shape[1]
    for seq, length in enumerate(kwargs["seq_lens"].tolist()):
        last = int(kwargs["block_table"][seq, (length - 1) // page])
        for cache in (kwargs["k_cache"], kwargs["v_cache"]):
            cache.view(torch.uint8)[last, length % page or page:] = 0xFF


def check_pages_past_the_table(shape: UnifiedShape, pages: int, profile, device: str, seed: int) -> None:
    """`shape`'s call with its block table cut to its first `pages` columns, narrower than its longest
    sequence needs: the keys past the table's width are absent, as in the reference (the kernels test
    each key against the table's width, the sequence's length and the segment's end), and every output
    row is written (NaN-prefilled)."""
    kwargs = shape.build(device, seed=seed).kwargs
    assert kwargs["block_table"].shape[1] > pages
    kwargs["block_table"] = kwargs["block_table"][:, :pages].contiguous()
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(out, reference.unified_attention(**kwargs))


def check_nan_bytes_past_lengths(kv_dtype: str, profile) -> None:
    """A unified call with `profile` over sequences whose last pages hold NaN bit patterns past their
    lengths (`poison_past_lengths`; 700, 90 and 33 keys, 4, 1 and 2 queries, 16q/1kv, head size
    256) matches the float64 reference."""
    kwargs = UnifiedShape((4, 1, 2), (700, 90, 33), 16, 1, 256, 16, kv_dtype=kv_dtype).build("cuda", seed=61).kwargs
    poison_past_lengths(kwargs)
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(out, reference.unified_attention(**kwargs))


def check_sparse_graph_replay(shape, seed: int, profile=None) -> None:
    """Capture one sparse call of `shape` (a SparseShape) with `profile` (None: the dispatcher's);
    replay it twice after writing new selections (another overlap), requests (reversed) and queries
    in place, each replay against the float64 reference."""
    static = shape.build("cuda", seed=seed).kwargs
    out = torch.empty_like(static["q"])
    pagedattn.sparse_attention(**static, out=out, profile=profile)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        pagedattn.sparse_attention(**static, out=out, profile=profile)
    for fresh_seed in (seed + 1, seed + 2):
        fresh = dataclasses.replace(shape, overlap=0.3).build("cuda", seed=fresh_seed).kwargs
        for name in ("indices", "token_to_req", "q"):
            static[name].copy_(fresh[name])
        static["token_to_req"].copy_(static["token_to_req"].flip(0))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert_close_to_reference(out, reference.sparse_attention(**static))


def check_unified_graph_replay(kv_dtype: str, seed: int, profile=None, q_len: int = 4) -> None:
    """Capture one unified verify call (8 sequences x q_len draft tokens, 16q/1kv, D=256, pages of
    16, up to 3,000 keys) at fixed shapes with `profile` (None: the dispatcher's); replay it three
    times after writing new sequence lengths, block tables and queries in place, each replay against
    the float64 reference. CUDA only."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    batch, capacity = 8, 3000
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


def check_sparse(kwargs: dict, profile, **extra) -> torch.Tensor:
    """One sparse call with `profile` into a NaN-filled output, against the float64 reference."""
    out = pagedattn.sparse_attention(**kwargs, **extra, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(out, reference.sparse_attention(**kwargs, **extra))
    return out


def check_sparse_masking(profile, kv_dtype: str, seed: int) -> None:
    """-1 in the middle and at the end, a page past the table, a negative and an out-of-range physical
    page, an all-invalid row (-> zeros, never NaN), a duplicated index (counts twice), a row of no
    known request, and per-row counts."""
    kwargs = SparseShape(2, 300, 4, 12, 1, 256, topk=120, local_window=16, kv_dtype=kv_dtype,
                         interleave=True).build("cuda", seed=seed).kwargs
    idx, table = kwargs["indices"].clone(), kwargs["block_table"].clone()
    num_blocks = kwargs["k_cache"].shape[0]
    idx[0, 3], idx[0, 90:] = -1, -1
    idx[1, 5] = 16 * table.shape[1] + 2
    idx[2, :] = -1
    idx[3, 7] = idx[3, 8]
    table[0, 0], table[1, 1] = -1, num_blocks + 5
    req = kwargs["token_to_req"].clone()
    req[5] = 9
    kwargs |= {"indices": idx, "block_table": table, "token_to_req": req}
    out = check_sparse(kwargs, profile)
    assert torch.count_nonzero(out[2]) == 0 and torch.count_nonzero(out[5]) == 0
    counts = torch.tensor([120, 7, 0, 33, 120, 1, 64, 119], dtype=torch.int32, device="cuda")
    out = check_sparse(kwargs, profile, counts=counts)
    assert torch.count_nonzero(out[2]) == 0


def check_sparse_scales_as_tensors(profile, seed: int) -> None:
    """FP8 pages: device-tensor scales (read by the kernel) give what the same floats give; both far from 1."""
    kwargs = SparseShape(2, 500, 4, 12, 1, 256, topk=200, local_window=32, kv_dtype="fp8").build(
        "cuda", seed=seed).kwargs
    kwargs |= {"k_scale": kwargs["k_scale"] * 7.0, "v_scale": kwargs["v_scale"] / 5.0}
    as_floats = check_sparse(kwargs, profile)
    tensors = {name: torch.tensor([kwargs[name]], dtype=torch.float32, device="cuda") for name in ("k_scale", "v_scale")}
    as_tensors = pagedattn.sparse_attention(**(kwargs | tensors), out=nan_like(kwargs["q"]), profile=profile)
    torch.testing.assert_close(as_tensors, as_floats, rtol=0, atol=0)


def padded_rows(cache: torch.Tensor) -> torch.Tensor:
    """`cache`'s values in a view whose rows lie 8 values further apart than they need: slot and block
    strides that are not multiples of 16 values, which the Gluon kernels cannot copy in 16-byte
    pieces (`api.copy_aligned`)."""
    padded = torch.zeros((*cache.shape[:-1], cache.shape[-1] + 8), dtype=cache.dtype, device=cache.device)
    padded[..., :cache.shape[-1]].copy_(cache)
    return padded[..., :cache.shape[-1]]


def check_sparse_interleaved_cache(profile, kv_dtype: str, seed: int) -> None:
    """K and V as the two halves of one [blocks, 2, page, heads, D] tensor (vLLM's cache layout): a
    page stride of 2 x page x heads x D in both caches, so the kernel takes its addressing through
    page and slot instead of the dense pages' token id x slot stride."""
    kwargs = SparseShape(2, 400, 3, 12, 2, 128, topk=150, local_window=16, kv_dtype=kv_dtype).build(
        "cuda", seed=seed).kwargs
    k, v = kwargs["k_cache"], kwargs["v_cache"]
    both = torch.empty((k.shape[0], 2, *k.shape[1:]), dtype=k.dtype, device="cuda")
    both[:, 0].copy_(k)
    both[:, 1].copy_(v)
    kwargs["k_cache"], kwargs["v_cache"] = both[:, 0], both[:, 1]
    assert kwargs["k_cache"].stride(0) == 2 * k.shape[1] * kwargs["k_cache"].stride(1)
    check_sparse(kwargs, profile)
