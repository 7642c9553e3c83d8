"""The float64 references are checked against independent computations, never against themselves.

Unified: dense K/V per sequence are scattered into shuffled pages here, and the expected output is
`torch.nn.functional.scaled_dot_product_attention` over the dense tensors with an explicit boolean
causal mask (GQA by repeating KV heads), or a hand-written float64 formula where SDPA has no
equivalent (softcap, sinks, duplicate keys). Sparse: the expected output is dense attention over
keys gathered explicitly from the dense per-request tensors.

Unused cache slots hold NaN, so a reference that reads a token it must not read fails.
"""

import math
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F

from pagedattn import reference
from pagedattn.workloads import FP8_MAX

EXACT = dict(rtol=1e-10, atol=1e-12)  # float64 vs float64: only summation order differs


@pytest.fixture(autouse=True, scope="module")
def single_thread():
    """These tensors are tiny: intra-op threads only add wake-up latency (10x slower on 2 cores)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass
class Paged:
    k_cache: torch.Tensor
    v_cache: torch.Tensor
    block_table: torch.Tensor  # [num_seqs, max_pages] int32
    num_blocks: int


def paginate(keys: list[torch.Tensor], values: list[torch.Tensor], block_size: int, gen: torch.Generator) -> Paged:
    """Scatter dense per-sequence K/V [L, Hkv, D] into pages taken in shuffled order."""
    pages = [_cdiv(k.shape[0], block_size) for k in keys]
    num_blocks = sum(pages)
    order = torch.randperm(num_blocks, generator=gen)
    if torch.equal(order, torch.arange(num_blocks)):
        order = order.roll(1)  # never the identity: a reference assuming contiguous pages must fail
    _, hkv, d = keys[0].shape
    caches = []
    for dense in (keys, values):
        cache = torch.full((num_blocks, block_size, hkv, d), float("nan")).to(dense[0].dtype)
        start = 0
        for seq, n_pages in enumerate(pages):
            for p in range(n_pages):
                chunk = dense[seq][p * block_size : (p + 1) * block_size]
                cache[order[start + p], : chunk.shape[0]] = chunk
            start += n_pages
        caches.append(cache)
    table = torch.zeros(len(keys), max(pages), dtype=torch.int32)
    start = 0
    for seq, n_pages in enumerate(pages):
        table[seq, :n_pages] = order[start : start + n_pages].to(torch.int32)
        start += n_pages
    return Paged(caches[0], caches[1], table, num_blocks)


def causal_mask(n: int, kv_len: int, window: int | None = None) -> torch.Tensor:
    """[n, kv_len] bool: query i sits at kv_len - n + i and sees keys up to it (within window)."""
    qpos = torch.arange(kv_len - n, kv_len)[:, None]
    kpos = torch.arange(kv_len)[None, :]
    visible = kpos <= qpos
    if window is not None:
        visible &= kpos > qpos - window
    return visible


def repeat_kv(x: torch.Tensor, group: int) -> torch.Tensor:
    """[L, Hkv, D] -> [L, Hkv * group, D]: query head h reads KV head h // group."""
    return x.repeat_interleave(group, dim=1)


def sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, visible: torch.Tensor, scale: float) -> torch.Tensor:
    """Dense attention of q [n, Hq, D] over k/v [L, Hkv, D] (float64) with a [n, L] mask."""
    group = q.shape[1] // k.shape[1]
    out = F.scaled_dot_product_attention(
        q.transpose(0, 1), repeat_kv(k, group).transpose(0, 1), repeat_kv(v, group).transpose(0, 1),
        attn_mask=visible, scale=scale,
    )
    return out.transpose(0, 1)


def explicit_scores(q: torch.Tensor, k: torch.Tensor, scale: float) -> torch.Tensor:
    """[Hq, n, L] float64 scores q.k * scale."""
    group = q.shape[1] // k.shape[1]
    return torch.einsum("nhd,lhd->hnl", q, repeat_kv(k, group)) * scale


@dataclass
class Batch:
    kwargs: dict  # arguments of reference.unified_attention
    q: torch.Tensor  # float64 [num_tokens, Hq, D]
    keys: list[torch.Tensor]  # dequantised float64 [L, Hkv, D] per sequence
    values: list[torch.Tensor]
    seqs: list[tuple[int, int]]  # (query_len, kv_len)

    def expected(self, per_seq) -> torch.Tensor:
        """Concatenate per_seq(q_seq, k, v, n, kv_len) over the batch."""
        outs, start = [], 0
        for (n, kv_len), k, v in zip(self.seqs, self.keys, self.values):
            outs.append(per_seq(self.q[start : start + n], k, v, n, kv_len))
            start += n
        return torch.cat(outs)


FP8_SCALE = 3 / 256  # dequant multiplier of FP8 caches here (exact in float32, so tensor scales agree)


def random_kv(lengths, hkv, d, kv_dtype, gen):
    """Per-sequence K and V as stored in the cache (bf16, or FP8 of x / FP8_SCALE) and as the
    float64 values they stand for: ((stored_k, stored_v), (dense_k, dense_v))."""
    stored, dense = ([], []), ([], [])
    for length in lengths:
        for i in range(2):
            x = torch.randn(length, hkv, d, generator=gen)
            if kv_dtype == "fp8":
                x8 = (x / FP8_SCALE).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)  # unclamped, torch 2.11 gave NaN
                stored[i].append(x8)
                dense[i].append(x8.to(torch.float64) * FP8_SCALE)
            else:
                stored[i].append(x.to(torch.bfloat16))
                dense[i].append(stored[i][-1].to(torch.float64))
    return stored, dense


def make_batch(seqs, hq, hkv, d, block_size, seed=0, kv_dtype="bf16", q_gain=1.0) -> Batch:
    gen = _gen(seed)
    q = (torch.randn(sum(n for n, _ in seqs), hq, d, generator=gen) * q_gain).to(torch.bfloat16)
    (stored_k, stored_v), (keys, values) = random_kv([kv for _, kv in seqs], hkv, d, kv_dtype, gen)
    paged = paginate(stored_k, stored_v, block_size, gen)
    cu = torch.tensor([0] + [sum(n for n, _ in seqs[: i + 1]) for i in range(len(seqs))], dtype=torch.int32)
    kwargs = dict(
        q=q, k_cache=paged.k_cache, v_cache=paged.v_cache, cu_seqlens_q=cu,
        seq_lens=torch.tensor([kv for _, kv in seqs], dtype=torch.int32), block_table=paged.block_table,
        max_seqlen_q=max(n for n, _ in seqs),
    )
    if kv_dtype == "fp8":
        kwargs.update(k_scale=FP8_SCALE, v_scale=FP8_SCALE)
    return Batch(kwargs, q.to(torch.float64), keys, values, list(seqs))


BATCH_MIXES = {
    "prefill-chunk": [(7, 23), (16, 16)],
    "decode": [(1, 1), (1, 37), (1, 64)],
    "verify": [(4, 4), (4, 29), (4, 50)],
    "mixed": [(9, 40), (1, 17), (4, 33), (1, 5)],
}
LAYOUTS = [(8, 2), (6, 6), (4, 1)]


# ----------------------------------------------------------------------------- unified vs SDPA


@pytest.mark.parametrize("block_size", [16, 32])
@pytest.mark.parametrize("head_size", [32, 64])
@pytest.mark.parametrize("hq,hkv", LAYOUTS)
@pytest.mark.parametrize("mix", BATCH_MIXES)
def test_unified_matches_sdpa_on_dense_causal_batch(mix, hq, hkv, head_size, block_size):
    batch = make_batch(BATCH_MIXES[mix], hq, hkv, head_size, block_size, seed=hq * 1000 + head_size + block_size)
    scale = head_size**-0.5
    out = reference.unified_attention(**batch.kwargs)
    expected = batch.expected(lambda q, k, v, n, kv: sdpa(q, k, v, causal_mask(n, kv), scale))
    assert out.dtype == torch.float64 and out.shape == batch.q.shape
    torch.testing.assert_close(out, expected, **EXACT)


def test_unified_softmax_scale_argument_is_used():
    batch = make_batch(BATCH_MIXES["mixed"], 8, 2, 32, 16, seed=3)
    out = reference.unified_attention(**batch.kwargs, softmax_scale=0.3)
    expected = batch.expected(lambda q, k, v, n, kv: sdpa(q, k, v, causal_mask(n, kv), 0.3))
    torch.testing.assert_close(out, expected, **EXACT)


@pytest.mark.parametrize("scale_as", ["float", "tensor"])
@pytest.mark.parametrize("mix", ["prefill-chunk", "verify"])
def test_unified_fp8_dequantises_with_scales(mix, scale_as):
    batch = make_batch(BATCH_MIXES[mix], 8, 2, 64, 16, seed=11, kv_dtype="fp8")
    if scale_as == "tensor":
        batch.kwargs.update(k_scale=torch.tensor([FP8_SCALE]), v_scale=torch.tensor([FP8_SCALE]))
    out = reference.unified_attention(**batch.kwargs)
    expected = batch.expected(lambda q, k, v, n, kv: sdpa(q, k, v, causal_mask(n, kv), 64**-0.5))
    torch.testing.assert_close(out, expected, **EXACT)


def test_unified_fp8_k_and_v_scales_act_separately():
    batch = make_batch(BATCH_MIXES["verify"], 4, 1, 32, 16, seed=12, kv_dtype="fp8")
    batch.kwargs.update(k_scale=2 * FP8_SCALE, v_scale=0.5 * FP8_SCALE)
    out = reference.unified_attention(**batch.kwargs)
    expected = batch.expected(lambda q, k, v, n, kv: sdpa(q, 2 * k, 0.5 * v, causal_mask(n, kv), 32**-0.5))
    torch.testing.assert_close(out, expected, **EXACT)


@pytest.mark.parametrize("window", [1, 3, 8])
@pytest.mark.parametrize("mix", ["prefill-chunk", "verify", "mixed"])
def test_unified_sliding_window_matches_windowed_sdpa(mix, window):
    batch = make_batch(BATCH_MIXES[mix], 8, 2, 32, 16, seed=window)
    out = reference.unified_attention(**batch.kwargs, sliding_window=window)
    expected = batch.expected(lambda q, k, v, n, kv: sdpa(q, k, v, causal_mask(n, kv, window), 32**-0.5))
    torch.testing.assert_close(out, expected, **EXACT)
    full = reference.unified_attention(**batch.kwargs)
    assert not torch.allclose(out, full), "the window must change the result of these batches"


@pytest.mark.parametrize("softcap", [1.0, 5.0])
def test_unified_softcap_matches_explicit_tanh(softcap):
    batch = make_batch(BATCH_MIXES["mixed"], 8, 2, 32, 16, seed=21, q_gain=4.0)
    scale = 32**-0.5

    def capped(q, k, v, n, kv):
        s = explicit_scores(q, k, scale)
        s = softcap * torch.tanh(s / softcap)
        p = torch.softmax(s.masked_fill(~causal_mask(n, kv), float("-inf")), dim=-1)
        return torch.einsum("hnl,lhd->nhd", p, repeat_kv(v, q.shape[1] // k.shape[1]))

    out = reference.unified_attention(**batch.kwargs, softcap=softcap)
    torch.testing.assert_close(out, batch.expected(capped), **EXACT)
    assert (out - reference.unified_attention(**batch.kwargs)).abs().max() > 1e-2


def test_unified_sinks_join_the_denominator_only():
    batch = make_batch(BATCH_MIXES["mixed"], 8, 2, 32, 16, seed=31)
    sinks = torch.tensor([-3.0, -1.0, 0.0, 0.5, 1.0, 2.0, 4.0, 8.0])
    scale = 32**-0.5

    def with_sinks(q, k, v, n, kv):
        visible = causal_mask(n, kv)
        lse = torch.logsumexp(explicit_scores(q, k, scale).masked_fill(~visible, float("-inf")), dim=-1)  # [Hq, n]
        # sum_j e^s_j v_j / (sum_j e^s_j + e^sink) = attention * Z / (Z + e^sink)
        shrink = 1.0 / (1.0 + torch.exp(sinks.double()[:, None] - lse))
        return sdpa(q, k, v, visible, scale) * shrink.T[:, :, None]

    out = reference.unified_attention(**batch.kwargs, sinks=sinks)
    torch.testing.assert_close(out, batch.expected(with_sinks), **EXACT)


# ----------------------------------------------------------------------------- hand-computed cases


def _single_head_cache(keys: torch.Tensor, values: torch.Tensor, block_size: int = 16):
    """One sequence, one head: keys/values [L, D] -> (k_cache, v_cache, block_table)."""
    paged = paginate([keys[:, None]], [values[:, None]], block_size, _gen(0))
    return paged.k_cache, paged.v_cache, paged.block_table


def _one_sequence(q: torch.Tensor, kv_len: int, k_cache, v_cache, block_table, **kw) -> torch.Tensor:
    n = q.shape[0]
    return reference.unified_attention(
        q, k_cache, v_cache, cu_seqlens_q=torch.tensor([0, n], dtype=torch.int32),
        seq_lens=torch.tensor([kv_len], dtype=torch.int32), block_table=block_table, max_seqlen_q=n, **kw,
    )


def test_unified_single_key_returns_its_value_exactly():
    gen = _gen(1)
    k = torch.randn(1, 32, generator=gen).to(torch.bfloat16)
    v = torch.randn(1, 32, generator=gen).to(torch.bfloat16)
    q = torch.randn(1, 1, 32, generator=gen).to(torch.bfloat16) * 50
    out = _one_sequence(q, 1, *_single_head_cache(k, v))
    assert torch.equal(out[0, 0], v[0].double())


def test_unified_two_keys_with_known_scores():
    # scale ln 3, q = e0, k0 = 0, k1 = e0: scores (0, ln 3) -> weights (1/4, 3/4)
    d = 32
    q = torch.zeros(1, 1, d, dtype=torch.bfloat16)
    q[0, 0, 0] = 1
    k = torch.zeros(2, d, dtype=torch.bfloat16)
    k[1, 0] = 1
    v = torch.zeros(2, d, dtype=torch.bfloat16)
    v[0, 0], v[1, 1] = 1, 1
    out = _one_sequence(q, 2, *_single_head_cache(k, v), softmax_scale=math.log(3))
    expected = torch.zeros(d, dtype=torch.float64)
    expected[0], expected[1] = 0.25, 0.75
    torch.testing.assert_close(out[0, 0], expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("perturbed", [0, 5, 6, 7, 8, 9])
def test_unified_verify_query_i_sees_exactly_the_first_L_minus_4_plus_i_plus_1_keys(perturbed):
    kv_len, n, d = 10, 4, 32
    gen = _gen(2)
    q = torch.randn(n, 1, d, generator=gen).to(torch.bfloat16)
    k = torch.randn(kv_len, d, generator=gen).to(torch.bfloat16)
    v = torch.randn(kv_len, d, generator=gen).to(torch.bfloat16)
    base = _one_sequence(q, kv_len, *_single_head_cache(k, v))
    k2, v2 = k.clone(), v.clone()
    k2[perturbed] += 1
    v2[perturbed] += 3
    moved = _one_sequence(q, kv_len, *_single_head_cache(k2, v2))
    for i in range(n):
        sees = kv_len - n + i + 1  # query i sees keys 0 .. L-4+i
        changed = not torch.equal(base[i], moved[i])
        assert changed == (perturbed < sees), f"query {i} (sees {sees} keys), key {perturbed} perturbed"


def _masked_positions_expected(batch: Batch, hidden: torch.Tensor, scale: float) -> torch.Tensor:
    """Single-sequence expectation where positions in `hidden` (bool [L]) do not exist."""
    (n, kv_len), = batch.seqs
    return sdpa(batch.q, batch.keys[0], batch.values[0], causal_mask(n, kv_len) & ~hidden[None, :], scale)


@pytest.mark.parametrize("bad_page", ["negative", "num_blocks", "far_beyond"])
def test_unified_invalid_page_ids_are_absent_tokens(bad_page):
    kv_len, n, bs = 45, 3, 16  # pages 0..2; page 1 (tokens 16..31) is made invalid
    batch = make_batch([(n, kv_len)], 4, 2, 32, bs, seed=4)
    num_blocks = batch.kwargs["k_cache"].shape[0]
    bad = {"negative": -1, "num_blocks": num_blocks, "far_beyond": num_blocks + 1000}[bad_page]
    batch.kwargs["block_table"][0, 1] = bad
    out = reference.unified_attention(**batch.kwargs)
    hidden = (torch.arange(kv_len) >= 16) & (torch.arange(kv_len) < 32)
    torch.testing.assert_close(out, _masked_positions_expected(batch, hidden, 32**-0.5), **EXACT)


def test_unified_pages_beyond_the_block_table_are_absent_tokens():
    kv_len, n, bs = 40, 2, 16  # needs 3 pages, the table keeps 2: tokens 32..39 do not exist
    batch = make_batch([(n, kv_len)], 4, 2, 32, bs, seed=5)
    batch.kwargs["block_table"] = batch.kwargs["block_table"][:, :2].contiguous()
    out = reference.unified_attention(**batch.kwargs)
    hidden = torch.arange(kv_len) >= 32
    torch.testing.assert_close(out, _masked_positions_expected(batch, hidden, 32**-0.5), **EXACT)


@pytest.mark.parametrize("with_sinks", [False, True])
def test_unified_row_without_visible_key_is_zero(with_sinks):
    batch = make_batch([(2, 20), (3, 30)], 4, 2, 32, 16, seed=6)
    batch.kwargs["block_table"][0, :] = -1  # the first sequence has no key at all
    if with_sinks:
        batch.kwargs["sinks"] = torch.ones(4)
    out = reference.unified_attention(**batch.kwargs)
    assert torch.equal(out[:2], torch.zeros_like(out[:2]))
    assert out[2:].abs().sum() > 0 and not out.isnan().any()


@pytest.mark.parametrize("kernel", ["unified", "sparse"])
def test_out_is_filled_with_the_returned_values(kernel):
    batch = make_batch(BATCH_MIXES["mixed"], 8, 2, 32, 16, seed=7)
    kwargs = dict(batch.kwargs)
    if kernel == "sparse":  # the same cache read as 15 sparse rows (token i of sequence s -> request s)
        kwargs = dict(
            q=batch.kwargs["q"], k_cache=batch.kwargs["k_cache"], v_cache=batch.kwargs["v_cache"],
            block_table=batch.kwargs["block_table"], indices=torch.tensor([[0, 3, 4, -1]] * 15, dtype=torch.int32),
            token_to_req=torch.tensor([0] * 9 + [1, 2, 2, 2, 2, 3], dtype=torch.int32),
        )
    out = torch.full(kwargs["q"].shape, float("nan"), dtype=torch.bfloat16)
    result = getattr(reference, f"{kernel}_attention")(**kwargs, out=out)
    assert result.dtype == torch.float64 and result.abs().sum() > 0
    assert torch.equal(out, result.to(torch.bfloat16))


# ----------------------------------------------------------------------------- sparse


@dataclass
class Requests:
    paged: Paged
    keys: list[torch.Tensor]  # dequantised float64 [L, Hkv, D] per request
    values: list[torch.Tensor]


def make_requests(lengths, hkv, d, block_size, seed, kv_dtype="bf16") -> Requests:
    gen = _gen(seed)
    (stored_k, stored_v), (keys, values) = random_kv(lengths, hkv, d, kv_dtype, gen)
    return Requests(paginate(stored_k, stored_v, block_size, gen), keys, values)


def sparse_call(req: Requests, q, indices, token_to_req, **kw) -> torch.Tensor:
    return reference.sparse_attention(
        q, req.paged.k_cache, req.paged.v_cache, indices=torch.tensor(indices, dtype=torch.int32),
        block_table=kw.pop("block_table", req.paged.block_table),
        token_to_req=torch.tensor(token_to_req, dtype=torch.int32), **kw,
    )


def gathered_expected(req: Requests, q: torch.Tensor, used: list[list[int]], token_to_req: list[int], scale: float):
    """Row r: dense attention over keys[token_to_req[r]][used[r]] (duplicates kept); empty -> 0."""
    rows = []
    for r, positions in enumerate(used):
        if not positions:
            rows.append(torch.zeros(q.shape[1:], dtype=torch.float64))
            continue
        k = req.keys[token_to_req[r]][positions]
        v = req.values[token_to_req[r]][positions]
        everything = torch.ones(1, len(positions), dtype=torch.bool)
        rows.append(sdpa(q[r : r + 1].double(), k, v, everything, scale)[0])
    return torch.stack(rows)


def _random_q(rows, hq, d, seed):
    return torch.randn(rows, hq, d, generator=_gen(seed)).to(torch.bfloat16)


@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
@pytest.mark.parametrize("block_size", [16, 32])
@pytest.mark.parametrize("head_size", [32, 64])
@pytest.mark.parametrize("hq,hkv", LAYOUTS)
def test_sparse_matches_attention_over_gathered_keys(hq, hkv, head_size, block_size, kv_dtype):
    lengths = [45, 70, 33]
    req = make_requests(lengths, hkv, head_size, block_size, seed=head_size + block_size, kv_dtype=kv_dtype)
    gen = _gen(hq)
    token_to_req = [2, 0, 1, 0, 2, 1, 1, 0]
    topk = 12
    used = [torch.randperm(lengths[t], generator=gen)[:topk].sort().values.tolist() for t in token_to_req]
    q = _random_q(len(token_to_req), hq, head_size, seed=hkv)
    scales = {}
    if kv_dtype == "fp8":
        scales = dict(k_scale=torch.tensor([FP8_SCALE]), v_scale=torch.tensor([FP8_SCALE]))
    out = sparse_call(req, q, used, token_to_req, **scales)
    torch.testing.assert_close(out, gathered_expected(req, q, used, token_to_req, head_size**-0.5), **EXACT)


def test_sparse_unused_slots_in_the_middle_and_at_the_end_are_ignored():
    req = make_requests([50], 2, 32, 16, seed=1)
    q = _random_q(3, 4, 32, seed=1)
    indices = [[3, -1, 20, -1, 41, -1, -1], [-1, -1, 7, 8, -1, -1, 49], [0, 1, 2, 3, -1, -1, -1]]
    used = [[p for p in row if p >= 0] for row in indices]
    out = sparse_call(req, q, indices, [0, 0, 0])
    torch.testing.assert_close(out, gathered_expected(req, q, used, [0, 0, 0], 32**-0.5), **EXACT)


@pytest.mark.parametrize("bad", ["beyond_block_table", "negative_page", "page_ge_num_blocks"])
def test_sparse_out_of_range_pages_are_ignored(bad):
    length, bs = 40, 16  # 3 pages per request: tokens 40..47 of the last page do not exist
    req = make_requests([length, length], 2, 32, bs, seed=2)
    table = req.paged.block_table
    if bad == "beyond_block_table":
        bad_index = 3 * bs + 3  # logical page 3, past the 3-column table (column 2 holds real data)
    else:
        table = torch.cat([table, torch.zeros(2, 1, dtype=torch.int32)], dim=1)
        table[:, 3] = -1 if bad == "negative_page" else req.paged.num_blocks
        bad_index = 3 * bs + 1  # logical page 3 maps to the bad physical page
    q = _random_q(2, 4, 32, seed=2)
    indices = [[1, bad_index, 17, 39], [bad_index, 0, 22, bad_index]]
    used = [[1, 17, 39], [0, 22]]
    out = sparse_call(req, q, indices, [0, 1], block_table=table)
    torch.testing.assert_close(out, gathered_expected(req, q, used, [0, 1], 32**-0.5), **EXACT)


def test_sparse_invalid_physical_page_inside_the_request_is_ignored():
    req = make_requests([40], 2, 32, 16, seed=3)
    table = req.paged.block_table.clone()
    table[0, 1] = -1  # positions 16..31 vanish
    q = _random_q(1, 4, 32, seed=3)
    out = sparse_call(req, q, [[2, 16, 20, 31, 35]], [0], block_table=table)
    torch.testing.assert_close(out, gathered_expected(req, q, [[2, 35]], [0], 32**-0.5), **EXACT)


def test_sparse_rows_without_valid_slot_give_zero_not_nan():
    req = make_requests([40], 2, 32, 16, seed=4)
    table = torch.cat([req.paged.block_table, torch.full((1, 1), -1, dtype=torch.int32)], dim=1)
    q = _random_q(7, 4, 32, seed=4)
    indices = [[-1, -1, -1], [48, 50, 63], [100, -1, 70], [5, 6, 7], [5, 6, 7], [5, 6, 7], [5, 6, 7]]
    # rows 0-2: no valid slot; row 3: counts 0; rows 4-5: unknown request; row 6: valid
    out = sparse_call(req, q, indices, [0, 0, 0, 0, -1, 1, 0], block_table=table,
                      counts=torch.tensor([3, 3, 3, 0, 3, 3, 3], dtype=torch.int32))
    assert not out.isnan().any()
    assert torch.equal(out[:6], torch.zeros_like(out[:6]))
    torch.testing.assert_close(out[6:], gathered_expected(req, q[6:], [[5, 6, 7]], [0], 32**-0.5), **EXACT)


def test_sparse_duplicate_indices_count_twice():
    # one head, scale 1: scores s_a = q.k_a, s_b = q.k_b; slots [a, a, b] weigh (2e^sa, e^sb) / (2e^sa + e^sb)
    req = make_requests([20], 1, 32, 16, seed=5)
    q = _random_q(1, 1, 32, seed=5)
    a, b = 4, 13
    out = sparse_call(req, q, [[a, b, a]], [0], softmax_scale=1.0)
    qd, k, v = q[0, 0].double(), req.keys[0][:, 0], req.values[0][:, 0]
    wa, wb = 2 * torch.exp(qd @ k[a]), torch.exp(qd @ k[b])
    expected = (wa * v[a] + wb * v[b]) / (wa + wb)
    torch.testing.assert_close(out[0, 0], expected, **EXACT)
    single = sparse_call(req, q, [[a, b]], [0], softmax_scale=1.0)
    assert not torch.allclose(out, single)


def test_sparse_counts_truncate_each_row():
    req = make_requests([60], 2, 32, 16, seed=6)
    q = _random_q(4, 4, 32, seed=6)
    indices = [[5, 9, 40, 59, 12]] * 4
    counts = [5, 3, 1, 2]
    out = sparse_call(req, q, indices, [0] * 4, counts=torch.tensor(counts, dtype=torch.int32))
    used = [row[:c] for row, c in zip(indices, counts)]
    torch.testing.assert_close(out, gathered_expected(req, q, used, [0] * 4, 32**-0.5), **EXACT)


def test_sparse_interleaved_rows_resolve_through_token_to_req():
    req = make_requests([30, 30, 30], 2, 32, 16, seed=7)
    q = _random_q(1, 4, 32, seed=7).expand(6, 4, 32).contiguous()  # same query on every row
    token_to_req = [1, 2, 0, 2, 1, 0]
    indices = [[0, 3, 17, 29]] * 6  # same positions on every row
    out = sparse_call(req, q, indices, token_to_req)
    torch.testing.assert_close(out, gathered_expected(req, q, indices, token_to_req, 32**-0.5), **EXACT)
    assert torch.equal(out[0], out[4]) and torch.equal(out[2], out[5])
    assert not torch.allclose(out[0], out[1]) and not torch.allclose(out[0], out[2])
