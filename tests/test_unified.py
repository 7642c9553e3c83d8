"""Unified paged attention vs the float64 reference on tiny shapes (interpreter on CPU, GPU if present).

Every launch shape is forced through `profile=`: single pass and split KV, row-major and kv-major,
several BLOCK_Q packings and tile sizes. Inputs are fresh random draws per case; outputs are
pre-filled with NaN so an unwritten element fails.
"""

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import pagedattn
from pagedattn import LaunchProfile, api, reference
from pagedattn.ops.unified import launch_unified_attention
from pagedattn.profiles import select
from pagedattn.profiles.types import VERIFY_MAX_QUERIES
from pagedattn.workloads import UnifiedShape
from conftest import assert_close_to_reference, check_pages_past_the_table, nan_like, plant_rising_scores

_seed = iter(range(10_000, 1_000_000))

# every launch shape and orientation, with and without the page-table entries read a step ahead
PROFILES = [
    LaunchProfile(64, 16, 1),
    LaunchProfile(64, 32, 3, num_stages=3, addresses_ahead=True),
    LaunchProfile(64, 16, 1, num_stages=4, kv_major=True, addresses_ahead=True),
    LaunchProfile(64, 32, 4, kv_major=True),
]
PROFILE_IDS = [p.short() for p in PROFILES]


def run_case(shape: UnifiedShape, device: str, profile: LaunchProfile | None, **overrides):
    inputs = shape.build(device, seed=next(_seed))
    kwargs = inputs.kwargs | overrides
    out = nan_like(kwargs["q"])
    result = pagedattn.unified_attention(**kwargs, out=out, profile=profile)
    assert result is out
    return out, reference.unified_attention(**kwargs), kwargs


@pytest.mark.parametrize("profile", PROFILES, ids=PROFILE_IDS)
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
@pytest.mark.parametrize("heads", [(16, 1), (32, 2)], ids=["16q1kv", "32q2kv"])
def test_verify_gqa16_four_draft_tokens(device, profile, kv_dtype, heads):
    """The MTP verify shape: 4 draft tokens x 16 heads per KV head in one program (BLOCK_M=64)."""
    shape = UnifiedShape((4, 4, 4), (45, 70, 4), heads[0], heads[1], 32, 16, kv_dtype=kv_dtype)
    out, ref, _ = run_case(shape, device, profile)
    assert_close_to_reference(out, ref)


@pytest.mark.parametrize("profile", PROFILES, ids=PROFILE_IDS)
def test_mixed_batch_prefill_decode_verify(device, profile):
    """Prefill chunk, decode, verify, a sequence of length 1 and one shorter than a tile, together."""
    shape = UnifiedShape((20, 1, 4, 1, 3, 0), (52, 33, 9, 1, 3, 5), 8, 2, 32, 16)
    out, ref, _ = run_case(shape, device, LaunchProfile.from_dict(profile.to_dict() | {"block_m": 16}))
    assert_close_to_reference(out, ref)


# a batch of prefill chunks (20, 9 queries), decode (1) and verify (4, 8) sequences, one of length 1
_MIXED = UnifiedShape((20, 1, 4, 9, 1, 8), (52, 33, 9, 40, 1, 30), 8, 2, 32, 16)
_SHORT = [False, True, True, False, True, True]  # at most VERIFY_MAX_QUERIES queries


@pytest.mark.parametrize("second", [LaunchProfile(16, 16, 1), LaunchProfile(16, 32, 3, num_stages=3)],
                         ids=["short-single", "short-split"])
@pytest.mark.parametrize("first", [LaunchProfile(32, 16, 1), LaunchProfile(32, 16, 3, kv_major=True)],
                         ids=["single", "split"])
def test_partitioned_mixed_batch(device, monkeypatch, first, second):
    """A plan of two launches (`select.partitioned_plan`): the chunks on wide blocks, single pass or
    split (whose merge writes the short sequences' rows as zeros), then the short sequences on narrow
    blocks, single pass or split (whose merge writes only their rows). Both launches happen and
    together write every row."""
    plan = (select.PlannedLaunch(select.Selection(first, "test"), queries_above=VERIFY_MAX_QUERIES),
            select.PlannedLaunch(select.Selection(second, "test"), queries_upto=VERIFY_MAX_QUERIES))
    monkeypatch.setattr(api, "choose_unified_plan", lambda *args, **kwargs: plan)
    ranges, launch = [], api._unified_launch
    monkeypatch.setattr(api, "_unified_launch", lambda *args: ranges.append(args[-2:]) or launch(*args))
    out, ref, _ = run_case(_MIXED, device, None)
    assert ranges == [(VERIFY_MAX_QUERIES, select.ALL_QUERIES), (0, VERIFY_MAX_QUERIES)]
    assert_close_to_reference(out, ref)


@pytest.mark.parametrize("longer", [LaunchProfile(32, 16, 1), LaunchProfile(32, 32, 2, num_stages=3)],
                         ids=["longer-single", "longer-split"])
def test_short_sequences_in_two_launches_by_query_count(device, monkeypatch, longer):
    """A plan of three launches (`select.short_launches`): the chunks split (their merge writes the
    short sequences' rows as zeros), the sequences of at most 4 queries on 16-row blocks split, the
    one of 8 on 32-row blocks in one pass or split; each short launch writes only its own rows, and
    together they write every row."""
    plan = (select.PlannedLaunch(select.Selection(LaunchProfile(32, 16, 3, kv_major=True), "test"),
                                 queries_above=VERIFY_MAX_QUERIES),
            select.PlannedLaunch(select.Selection(LaunchProfile(16, 32, 3, num_stages=3), "test"), queries_upto=4),
            select.PlannedLaunch(select.Selection(longer, "test"), queries_above=4, queries_upto=VERIFY_MAX_QUERIES))
    monkeypatch.setattr(api, "choose_unified_plan", lambda *args, **kwargs: plan)
    ranges, launch = [], api._unified_launch
    monkeypatch.setattr(api, "_unified_launch", lambda *args: ranges.append(args[-2:]) or launch(*args))
    out, ref, _ = run_case(_MIXED, device, None)
    assert ranges == [(VERIFY_MAX_QUERIES, select.ALL_QUERIES), (0, 4), (4, VERIFY_MAX_QUERIES)]
    assert_close_to_reference(out, ref)


@pytest.mark.parametrize("profile", [LaunchProfile(16, 16, 1), LaunchProfile(64, 16, 1), LaunchProfile(16, 16, 2)],
                         ids=["single-q4", "single-q16", "split"])
@pytest.mark.parametrize("short", [False, True], ids=["long", "short"])
def test_a_launch_writes_only_its_query_range(device, profile, short):
    """One launch over the sequences of one side of VERIFY_MAX_QUERIES: their rows match the
    reference; the other sequences' rows stay unwritten (single pass, and the short launch split,
    whose partials and merge are laid out by sequence) or are merged as zeros (the chunks' launch
    split). The short launch runs cdiv(8, BLOCK_Q) blocks per sequence (2 at BLOCK_Q 4, 1 at 16)."""
    inputs = _MIXED.build(device, seed=next(_seed))
    kw = inputs.kwargs
    out = nan_like(kw["q"])
    bounds = dict(queries_above=0, queries_upto=VERIFY_MAX_QUERIES) if short else \
        dict(queries_above=VERIFY_MAX_QUERIES, queries_upto=select.ALL_QUERIES)
    launch_unified_attention(kw["q"], kw["k_cache"], kw["v_cache"], out, kw["cu_seqlens_q"], kw["seq_lens"],
                             kw["block_table"], softmax_scale=kw["q"].shape[2] ** -0.5, k_scale=None, v_scale=None,
                             sliding_window=None, softcap=None, sinks=None, profile=profile, **bounds)
    ref = reference.unified_attention(**kw)
    mine = torch.cat([torch.full((n,), s == short) for n, s in zip(_MIXED.query_lens, _SHORT)])
    assert_close_to_reference(out[mine], ref[mine])
    others = out[~mine]
    assert (others.isnan().all() if profile.num_splits == 1 or short else (others == 0).all())


@pytest.mark.parametrize("profile", ["m64/n16/s1/w4/st4/wgmma", "m64/n128/s1/w8/st2/keysrows"])
def test_a_gluon_profile_refuses_a_query_range(device, profile):
    """The Gluon kernels take every sequence of a call: a plan that gives one a query range is a bug,
    refused before anything launches (the profile layer never makes one)."""
    kw = _MIXED.build(device, seed=next(_seed)).kwargs
    plan = (select.PlannedLaunch(select.Selection(LaunchProfile.from_short(profile), "test"),
                                 queries_upto=VERIFY_MAX_QUERIES),)
    out = nan_like(kw["q"])
    with pytest.raises(ValueError, match="takes every sequence of the call"):
        api.launch_unified_plan(plan, out=out, **kw)
    assert out.isnan().all()


@pytest.mark.parametrize("block_m", [16, 32, 64])
@pytest.mark.parametrize("tile_n", [16, 32, 64])
def test_block_packing_and_tiles(device, block_m, tile_n):
    """BLOCK_Q = block_m // group tokens per program (4, 8, 16 at group 4) with every tile size."""
    shape = UnifiedShape((7, 1, 12), (40, 17, 12), 8, 2, 32, 16)
    out, ref, _ = run_case(shape, device, LaunchProfile(block_m, tile_n, 2))
    assert_close_to_reference(out, ref)


@pytest.mark.parametrize("num_splits", [128, 256, 512])
def test_a_single_long_request_split_past_the_default_cap(device, num_splits):
    """The tuner may split one sequence's KV range up to 256 ways (its only parallelism with one
    KV head), a profile any number: segments, most of them empty here, merge through 128 to 512
    padded partial rows (512: two chunks of splits in the merge)."""
    shape = UnifiedShape((4,), (1100,), 16, 1, 64, 16, kv_dtype="fp8")
    out, ref, _ = run_case(shape, device, LaunchProfile(16, 16, num_splits, num_warps=2))
    assert_close_to_reference(out, ref)


@pytest.mark.parametrize("head_size,page", [(64, 16), (128, 32), (256, 64)])
@pytest.mark.parametrize("kv_major", [False, True])
def test_head_sizes_and_pages(device, head_size, page, kv_major):
    shape = UnifiedShape((3, 1), (80, 130), 4, 2, head_size, page)
    out, ref, _ = run_case(shape, device, LaunchProfile(16, 32, 2, kv_major=kv_major))
    assert_close_to_reference(out, ref)


def test_non_power_of_two_head_size_and_group(device):
    """head size 80 (padded to 128 inside) and a 3:1 group packed densely into 16 rows."""
    shape = UnifiedShape((4, 2), (30, 50), 6, 2, 80, 16)
    out, ref, _ = run_case(shape, device, LaunchProfile(16, 16, 2))
    assert_close_to_reference(out, ref)


@pytest.mark.parametrize("profile", PROFILES, ids=PROFILE_IDS)
@pytest.mark.parametrize(
    "features",
    [dict(sliding_window=8), dict(softcap=5.0), dict(sinks=True),
     dict(sliding_window=5, softcap=3.0, sinks=True)],
    ids=["window", "softcap", "sinks", "all"],
)
def test_window_softcap_sinks(device, profile, features):
    shape = UnifiedShape((6, 1, 4), (40, 25, 4), 8, 2, 32, 16, kv_dtype="bf16", **features)
    out, ref, _ = run_case(shape, device, LaunchProfile.from_dict(profile.to_dict() | {"block_m": 16}))
    assert_close_to_reference(out, ref)


@pytest.mark.parametrize("q_dtype", ["bf16", "fp16"])
def test_fp16_queries_and_scale_tensors(device, q_dtype):
    """FP8 pages with k/v scales given as 1-element device tensors (read on the device)."""
    shape = UnifiedShape((4, 1), (50, 20), 8, 2, 32, 16, q_dtype=q_dtype, kv_dtype="fp8")
    inputs = shape.build(device, seed=next(_seed))
    kwargs = inputs.kwargs
    kwargs["k_scale"] = torch.tensor([kwargs["k_scale"]], dtype=torch.float32, device=device)
    kwargs["v_scale"] = torch.tensor([kwargs["v_scale"]], dtype=torch.float32, device=device)
    out = pagedattn.unified_attention(**kwargs, profile=LaunchProfile(16, 16, 2))
    assert out.dtype == kwargs["q"].dtype
    assert_close_to_reference(out, reference.unified_attention(**kwargs))


def test_fp16_cache(device):
    shape = UnifiedShape((2, 3), (30, 18), 4, 1, 32, 16, q_dtype="fp16", kv_dtype="fp16")
    out, ref, _ = run_case(shape, device, None)
    assert_close_to_reference(out, ref)


@pytest.mark.parametrize("profile", PROFILES, ids=PROFILE_IDS)
def test_rising_scores_rescale_only_past_the_slack(device, profile):
    """Both paths of the lazy rescale (conftest.plant_rising_scores), checked against float64."""
    kwargs = UnifiedShape((4, 2), (192, 150), 8, 1, 32, 16).build(device, seed=next(_seed)).kwargs
    plant_rising_scores(kwargs, profile.tile_n)
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=profile)
    assert_close_to_reference(out, reference.unified_attention(**kwargs))


@pytest.mark.parametrize("profile", PROFILES, ids=PROFILE_IDS)
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_invalid_pages_are_masked(device, profile, kv_dtype):
    """Negative and out-of-range physical page ids are skipped, like pages that do not exist (FP8
    pages reach the kernel as bytes: the same masks guard their loads)."""
    shape = UnifiedShape((4, 1), (70, 40), 8, 2, 32, 16, kv_dtype=kv_dtype)
    inputs = shape.build(device, seed=next(_seed))
    kwargs = inputs.kwargs
    table = kwargs["block_table"].clone()
    num_blocks = kwargs["k_cache"].shape[0]
    table[0, 1] = -7
    table[0, 2] = num_blocks + 3
    table[1, 0] = 2**30
    kwargs["block_table"] = table
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]),
                                      profile=LaunchProfile.from_dict(profile.to_dict() | {"block_m": 16}))
    assert_close_to_reference(out, reference.unified_attention(**kwargs))


@pytest.mark.parametrize("profile", PROFILES, ids=PROFILE_IDS)
def test_pages_past_the_block_table_are_absent(device, profile):
    """A table of 3 pages for sequences of 70 and 40 keys: keys 48..69 of the first are absent."""
    check_pages_past_the_table(UnifiedShape((3, 2), (70, 40), 4, 1, 32, 16, kv_dtype="fp8"), 3, profile, device,
                               next(_seed))


def test_every_page_invalid_gives_zero(device):
    shape = UnifiedShape((2,), (20,), 4, 1, 32, 16)
    inputs = shape.build(device, seed=next(_seed))
    kwargs = inputs.kwargs | {"block_table": torch.full_like(inputs.kwargs["block_table"], -1)}
    out = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=LaunchProfile(16, 16, 2))
    assert torch.count_nonzero(out) == 0 and not out.isnan().any()


def test_dispatcher_default_profile(device):
    """profile=None goes through the dispatcher and still matches the reference."""
    shape = UnifiedShape((4, 4), (90, 33), 16, 1, 32, 16, kv_dtype="fp8")
    out, ref, _ = run_case(shape, device, None)
    assert_close_to_reference(out, ref)


def test_torch_compile_calls_the_custom_op(device):
    shape = UnifiedShape((4, 1), (30, 12), 8, 2, 32, 16)
    kwargs = shape.build(device, seed=next(_seed)).kwargs

    def layer(q, k_cache, v_cache, cu, lens, table):
        out = pagedattn.unified_attention(q * 2.0, k_cache, v_cache, cu_seqlens_q=cu, seq_lens=lens,
                                          block_table=table, max_seqlen_q=4, profile=LaunchProfile(16, 16, 2))
        return out.float().sum(-1)

    compiled = torch.compile(layer, backend="aot_eager" if device == "cpu" else "inductor")
    args = (kwargs["q"], kwargs["k_cache"], kwargs["v_cache"], kwargs["cu_seqlens_q"], kwargs["seq_lens"],
            kwargs["block_table"])
    got = compiled(*args)
    ref = reference.unified_attention(**(kwargs | {"q": kwargs["q"] * 2.0})).sum(-1)
    assert torch.allclose(got.double(), ref, rtol=2e-2, atol=2e-2)


class _OpNames(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))


def test_eager_calls_launch_directly_and_dispatch_modes_see_the_custom_op(device, monkeypatch):
    """An eager call launches without the custom op's dispatch (~95 us of host time, perf-notes v23
    item 3); under a dispatch mode (FakeTensorMode, FlopCounterMode, ...) it goes through
    torch.ops, so the mode sees pagedattn::unified_attention. Both match the reference."""
    kwargs = UnifiedShape((4, 1), (30, 12), 8, 2, 32, 16).build(device, seed=next(_seed)).kwargs
    direct, launch = [], api._unified_launch
    monkeypatch.setattr(api, "_unified_launch", lambda *args: direct.append(len(args)) or launch(*args))
    eager = pagedattn.unified_attention(**kwargs, out=nan_like(kwargs["q"]), profile=LaunchProfile(16, 16, 2))
    assert len(direct) == 1
    out = nan_like(kwargs["q"])
    with _OpNames() as mode:
        pagedattn.unified_attention(**kwargs, out=out, profile=LaunchProfile(16, 16, 2))
    assert len(direct) == 1 and "pagedattn.unified_attention.default" in mode.names
    ref = reference.unified_attention(**kwargs)
    assert_close_to_reference(eager, ref)
    assert_close_to_reference(out, ref)


def test_custom_op_is_registered():
    assert hasattr(torch.ops.pagedattn, "unified_attention")
    assert hasattr(torch.ops.pagedattn, "sparse_attention")
