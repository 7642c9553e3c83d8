"""Sparse paged GQA attention vs the float64 reference on tiny shapes (interpreter on CPU, GPU if present)."""

import pytest
import torch

import pagedattn
from pagedattn import LaunchProfile, reference
from pagedattn.ops.sparse import resolve_selections
from pagedattn.ops.sparse_exchange import token_row_width
from pagedattn.workloads import SparseShape
from conftest import assert_close_to_reference, nan_like, plant_rising_sparse_scores

_seed = iter(range(20_000, 1_000_000))

# every launch shape and orientation, with and without the token ids read a step ahead
PROFILES = [
    LaunchProfile(16, 16, 1),
    LaunchProfile(16, 32, 3, num_stages=3, addresses_ahead=True),
    LaunchProfile(16, 16, 1, num_stages=4, kv_major=True, addresses_ahead=True),
    LaunchProfile(16, 16, 4, kv_major=True),
]
PROFILE_IDS = [p.short() for p in PROFILES]


def build(shape: SparseShape, device: str) -> dict:
    return shape.build(device, seed=next(_seed)).kwargs


def check(kwargs: dict, profile: LaunchProfile | None, **extra):
    out = nan_like(kwargs["q"])
    result = pagedattn.sparse_attention(**kwargs, **extra, out=out, profile=profile)
    assert result is out
    assert_close_to_reference(out, reference.sparse_attention(**kwargs, **extra))
    return out


@pytest.mark.parametrize("profile", PROFILES, ids=PROFILE_IDS)
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
@pytest.mark.parametrize("heads", [(24, 2), (12, 1), (6, 1), (3, 1), (5, 1)], ids=["tp1", "tp2", "tp4", "tp8", "g5"])
def test_gqa_shape_classes(device, profile, kv_dtype, heads):
    shape = SparseShape(2, 60, 3, heads[0], heads[1], 32, topk=24, local_window=6, kv_dtype=kv_dtype)
    check(build(shape, device), profile)


@pytest.mark.parametrize("profile", PROFILES, ids=PROFILE_IDS)
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_padding_invalid_pages_empty_rows_duplicates(device, profile, kv_dtype):
    """-1 in the middle and at the end, a page past the table, a negative and an out-of-range physical
    page, an all-invalid row (-> zeros), and a duplicated index (counts twice); BF16 and FP8 pages."""
    shape = SparseShape(2, 64, 3, 8, 2, 32, topk=20, local_window=4, interleave=True, kv_dtype=kv_dtype)
    kwargs = build(shape, device)
    idx = kwargs["indices"].clone()
    table = kwargs["block_table"].clone()
    num_blocks = kwargs["k_cache"].shape[0]
    idx[0, 3] = -1
    idx[0, 10:] = -1
    idx[1, 5] = 16 * table.shape[1] + 2  # logical page beyond the block table
    idx[2, :] = -1  # nothing valid
    idx[3, 7] = idx[3, 8]  # duplicate
    table[0, 0] = -1  # pages used by request 0's low positions disappear
    table[1, 1] = num_blocks + 5
    kwargs |= {"indices": idx, "block_table": table}
    out = check(kwargs, profile)
    assert torch.count_nonzero(out[2]) == 0


@pytest.mark.parametrize("profile", PROFILES, ids=PROFILE_IDS)
def test_counts_stop_early(device, profile):
    shape = SparseShape(2, 50, 2, 4, 1, 32, topk=30, local_window=5)
    kwargs = build(shape, device)
    counts = torch.tensor([30, 7, 0, 12], dtype=torch.int32, device=device)
    out = check(kwargs, profile, counts=counts)
    assert torch.count_nonzero(out[2]) == 0


@pytest.mark.parametrize("profile", PROFILES, ids=PROFILE_IDS)
def test_rising_scores_rescale_only_past_the_slack(device, profile):
    """Both paths of the lazy rescale (conftest.plant_rising_sparse_scores), checked against float64."""
    kwargs = build(SparseShape(1, 300, 2, 4, 1, 32, topk=256, local_window=64), device)
    plant_rising_sparse_scores(kwargs, profile.tile_n)
    check(kwargs, profile)


def test_unknown_request_row_gives_zero(device):
    shape = SparseShape(2, 40, 2, 4, 1, 32, topk=16, local_window=4)
    kwargs = build(shape, device)
    kwargs["token_to_req"] = torch.tensor([0, 5, -1, 1], dtype=torch.int32, device=device)
    out = check(kwargs, LaunchProfile(16, 16, 2))
    assert torch.count_nonzero(out[1:3]) == 0


@pytest.mark.parametrize("head_size,page", [(64, 16), (128, 32), (256, 64)])
def test_head_sizes_and_pages(device, head_size, page):
    shape = SparseShape(1, 90, 2, 6, 1, head_size, topk=40, local_window=8, block_size=page)
    check(build(shape, device), LaunchProfile(16, 32, 2))


def test_scale_tensors_and_dispatcher(device):
    shape = SparseShape(2, 70, 2, 12, 1, 32, topk=32, local_window=8, kv_dtype="fp8")
    kwargs = build(shape, device)
    kwargs["k_scale"] = torch.tensor([kwargs["k_scale"]], dtype=torch.float32, device=device)
    kwargs["v_scale"] = torch.tensor([kwargs["v_scale"]], dtype=torch.float32, device=device)
    check(kwargs, None)


def test_torch_compile_calls_the_custom_op(device):
    shape = SparseShape(2, 40, 2, 4, 1, 32, topk=16, local_window=4)
    kwargs = build(shape, device)

    def layer(q, k_cache, v_cache, indices, table, req):
        return pagedattn.sparse_attention(q, k_cache, v_cache, indices=indices, block_table=table,
                                          token_to_req=req, profile=LaunchProfile(16, 16, 2)).float() * 3.0

    compiled = torch.compile(layer, backend="aot_eager" if device == "cpu" else "inductor")
    got = compiled(kwargs["q"], kwargs["k_cache"], kwargs["v_cache"], kwargs["indices"], kwargs["block_table"],
                   kwargs["token_to_req"])
    assert_close_to_reference(got, reference.sparse_attention(**kwargs) * 3.0)


@pytest.mark.parametrize("with_counts", [False, True])
def test_token_pre_pass_pads_rows_with_minus_one(device, with_counts):
    """The Gluon kernels' token buffer (`token_row_width` at one split): each row is the unpadded
    pre-pass's row (-1 past its count) followed by -1 as far as their ring reads ahead, so their
    unmasked loads read no stale ids; with splits the rows stay top-k long."""
    kwargs = build(SparseShape(2, 60, 3, 12, 1, 64, topk=37, local_window=8), device)
    counts = torch.tensor([37, 5, 0, 20, 36, 1], dtype=torch.int32, device=device) if with_counts else None
    args = (kwargs["indices"], counts, kwargs["block_table"], kwargs["token_to_req"], kwargs["k_cache"].shape[0],
            kwargs["k_cache"].shape[1])
    width = token_row_width(37, 32, 2, 1)
    assert width == 64 + 2 * 32 and token_row_width(37, 32, 2, 4) == 37
    plain, padded = resolve_selections(*args), resolve_selections(*args, width)
    assert padded.shape == (6, width)
    assert torch.equal(padded[:, :37], plain) and bool((padded[:, 37:] == -1).all())
    if with_counts:
        for row, count in enumerate(counts.tolist()):
            assert bool((plain[row, count:] == -1).all()) and bool((plain[row, :count] >= 0).all())
