"""Bad input raises ValueError/TypeError naming the argument; content checks are opt-in."""

import dataclasses

import pytest
import torch

import pagedattn
from pagedattn import LaunchProfile, api
from pagedattn.device import KNOWN_DEVICES
from pagedattn.profiles import select
from pagedattn.profiles.types import ShapeKey
from pagedattn.workloads import SparseShape, UnifiedShape
from conftest import padded_rows


@pytest.fixture
def unified_kwargs(device):
    return UnifiedShape((4, 1), (20, 9), 8, 2, 32, 16, kv_dtype="bf16").build(device, seed=1).kwargs


@pytest.fixture
def sparse_kwargs(device):
    return SparseShape(2, 40, 2, 4, 1, 32, topk=16, local_window=4).build(device, seed=2).kwargs


def _bad_unified(kw):
    q, k, v = kw["q"], kw["k_cache"], kw["v_cache"]
    dev = q.device
    return {
        "q dtype": (dict(q=q.float()), TypeError, "q must have dtype"),
        "q rank": (dict(q=q[0]), ValueError, "q must have 3 dimensions"),
        "q stride": (dict(q=q.transpose(1, 2).contiguous().transpose(1, 2)), ValueError, "q must have a unit stride"),
        "cache dtype mismatch": (dict(k_cache=k.half(), v_cache=v.half()), TypeError, "must have the dtype of q"),
        "v shape": (dict(v_cache=v[:, :8]), ValueError, "v_cache must match k_cache"),
        "head ratio": (dict(q=torch.randn(5, 7, 32, device=dev).bfloat16()), ValueError, "multiple of num_kv_heads"),
        "head size": (dict(q=q[..., :16].contiguous()), ValueError, "head size 32 differs"),
        "cu dtype": (dict(cu_seqlens_q=kw["cu_seqlens_q"].long()), TypeError, "cu_seqlens_q must have dtype"),
        "cu length": (dict(cu_seqlens_q=kw["cu_seqlens_q"][:2]), ValueError, r"cu_seqlens_q must have batch\+1"),
        "table rows": (dict(block_table=kw["block_table"][:1]), ValueError, "block_table must have one row"),
        "seq_lens rank": (dict(seq_lens=kw["seq_lens"][None]), ValueError, "seq_lens must have 1 dimensions"),
        "max_seqlen_q": (dict(max_seqlen_q=0), ValueError, "max_seqlen_q must be a positive int"),
        "window": (dict(sliding_window=-3), ValueError, "sliding_window must be a positive int"),
        "softcap": (dict(softcap=0.0), ValueError, "softcap must be a positive"),
        "scale on bf16": (dict(k_scale=0.5), ValueError, "float8_e4m3fn caches only"),
        "sinks shape": (dict(sinks=torch.zeros(3, device=dev)), ValueError, "sinks must have one logit per query head"),
        "sinks dtype": (dict(sinks=torch.zeros(8, dtype=torch.float64, device=dev)), TypeError, "sinks must have dtype"),
        "out shape": (dict(out=torch.empty(5, 8, 16, dtype=torch.bfloat16, device=dev)), ValueError,
                      "out must have the shape"),
        "out dtype": (dict(out=torch.empty(5, 8, 32, dtype=torch.float16, device=dev)), TypeError, "out must have dtype"),
        "profile type": (dict(profile={"block_m": 16}), TypeError, "profile must be a LaunchProfile"),
        "profile too small for group": (dict(q=torch.randn(5, 64, 32, device=dev).bfloat16(),
                                             k_cache=torch.randn(k.shape[0], 16, 2, 32, device=dev).bfloat16(),
                                             v_cache=torch.randn(k.shape[0], 16, 2, 32, device=dev).bfloat16(),
                                             profile=LaunchProfile(16, 16)), ValueError, "smaller than the GQA group"),
        "not a tensor": (dict(block_table=[[0]]), TypeError, "block_table must be a torch.Tensor"),
    }


@pytest.mark.parametrize("case", list(_bad_unified(UnifiedShape((1,), (1,), 8, 2, 32).build("cpu").kwargs)))
def test_unified_rejects_bad_input(unified_kwargs, case):
    change, error, message = _bad_unified(unified_kwargs)[case]
    with pytest.raises(error, match=message):
        pagedattn.unified_attention(**(unified_kwargs | change))


@pytest.mark.skipif(torch.cuda.is_available(), reason="meta tensors pass the device check only under the interpreter")
@pytest.mark.parametrize("which", ["k_cache", "v_cache"])
def test_cache_strides_beyond_32_bit_block_addressing_are_rejected(unified_kwargs, which):
    """A head-major view of a large cache: its slot and head strides reach past 2**31 elements
    within one block, which the kernels' 32-bit in-block offsets cannot address."""
    q = torch.empty(5, 8, 32, dtype=torch.bfloat16, device="meta")
    fine = torch.empty(4, 16, 2, 32, dtype=torch.bfloat16, device="meta")
    wide = torch.empty_strided((4, 16, 2, 32), (32, 2**27, 2**30, 1), dtype=torch.bfloat16, device="meta")
    caches = {"k_cache": fine, "v_cache": fine} | {which: wide}
    with pytest.raises(ValueError, match=f"{which} strides .* 32 bits"):
        pagedattn.unified_attention(**(unified_kwargs | caches | dict(q=q)))


def test_unified_scale_tensor_must_be_one_float32_element(device):
    kw = UnifiedShape((1,), (9,), 4, 1, 32, kv_dtype="fp8").build(device, seed=3).kwargs
    with pytest.raises(ValueError, match="k_scale must be a float or a 1-element float32 tensor"):
        pagedattn.unified_attention(**(kw | dict(k_scale=torch.ones(2, device=device))))


def test_content_checks_are_opt_in(unified_kwargs):
    too_small = unified_kwargs | dict(max_seqlen_q=2)  # the first sequence has 4 queries
    pagedattn.set_content_checks(True)
    try:
        with pytest.raises(ValueError, match="max_seqlen_q=2 is smaller than a sequence's query length"):
            pagedattn.unified_attention(**too_small)
        dev = unified_kwargs["q"].device
        with pytest.raises(ValueError, match="seq_lens must be >= each sequence's query length"):
            pagedattn.unified_attention(**(unified_kwargs | dict(seq_lens=torch.tensor([3, 9], dtype=torch.int32,
                                                                                       device=dev))))
        with pytest.raises(ValueError, match="non-decreasing"):
            pagedattn.unified_attention(**(unified_kwargs | dict(cu_seqlens_q=torch.tensor([0, 4, 2], dtype=torch.int32,
                                                                                           device=dev))))
    finally:
        pagedattn.set_content_checks(False)
    pagedattn.unified_attention(**too_small)  # off: no device read, no error


def _bad_sparse(kw):
    return {
        "indices dtype": (dict(indices=kw["indices"].long()), TypeError, "indices must have dtype"),
        "indices rows": (dict(indices=kw["indices"][:1]), ValueError, "indices must have one row per query row"),
        "token_to_req rows": (dict(token_to_req=kw["token_to_req"][:1]), ValueError, "token_to_req must have one"),
        "counts rows": (dict(counts=torch.zeros(1, dtype=torch.int32, device=kw["q"].device)), ValueError,
                        "counts must have one entry"),
        "q dtype": (dict(q=kw["q"].float()), TypeError, "q must have dtype"),
        "softmax_scale": (dict(softmax_scale=-1.0), ValueError, "softmax_scale must be a positive"),
    }


@pytest.mark.parametrize("case", list(_bad_sparse(SparseShape(1, 20, 1, 4, 1, 32, topk=8, local_window=2).build("cpu").kwargs)))
def test_sparse_rejects_bad_input(sparse_kwargs, case):
    change, error, message = _bad_sparse(sparse_kwargs)[case]
    with pytest.raises(error, match=message):
        pagedattn.sparse_attention(**(sparse_kwargs | change))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs two devices: cpu and cuda")
def test_device_mismatch_names_the_argument(unified_kwargs):
    with pytest.raises(ValueError, match="k_cache is on cpu, expected cuda"):
        pagedattn.unified_attention(**(unified_kwargs | dict(k_cache=unified_kwargs["k_cache"].cpu())))
    with pytest.raises(ValueError, match="q is on cpu: the kernels need CUDA tensors"):
        pagedattn.unified_attention(**{k: (v.cpu() if isinstance(v, torch.Tensor) else v)
                                       for k, v in unified_kwargs.items()})


def test_copy_alignment_reads_the_strides_and_the_storage_offset():
    """`api.copy_aligned`: what the Gluon kernels' 16-byte copies need of a cache."""
    cache = torch.zeros(4, 16, 2, 128, dtype=torch.bfloat16)
    assert api.copy_aligned(cache)
    assert not api.copy_aligned(padded_rows(cache))  # head stride 136
    assert not api.copy_aligned(padded_rows(cache[:, :, :1]))  # one head: slot stride 136
    flat = torch.zeros(cache.numel() + 8, dtype=torch.bfloat16)
    assert not api.copy_aligned(flat[4:4 + cache.numel()].view(cache.shape))  # starts 8 bytes in
    assert api.copy_aligned(flat[8:8 + cache.numel()].view(cache.shape))  # 16 bytes in
    both = torch.zeros(4, 2, 16, 2, 128, dtype=torch.float8_e4m3fn)
    assert api.copy_aligned(both[:, 1])  # V as the second half of vLLM's [blocks, 2, page, heads, head] cache
    key = api.sparse_shape_key(torch.zeros(3, 12, 128), cache, torch.zeros(3, 8), v_cache=padded_rows(cache[:, :, :1]))
    assert not key.aligned_cache


H200 = KNOWN_DEVICES["NVIDIA_H200"]


@pytest.mark.parametrize("key", [
    ShapeKey("unified", "bf16", 256, 16, "verify", 20, 4, 80, 1, 32768),  # BF16 MTP: wgmma
    ShapeKey("unified", "fp8", 256, 16, "verify", 20, 4, 80, 1, 32768),  # FP8 MTP: keys as rows
    ShapeKey("sparse", "bf16", 256, 12, "decode", 8192, 1, 8192, 1, 2051),  # sparse TP2: exchange
    ShapeKey("sparse", "fp8", 256, 6, "decode", 8192, 1, 8192, 1, 2051),  # sparse TP4 FP8: keys as rows
], ids=["mtp-bf16", "mtp-fp8", "sparse-tp2", "sparse-tp4-fp8"])
def test_h200_sends_caches_the_gluon_kernels_cannot_copy_whole_to_the_triton_kernels(key):
    """Shapes the H200's table or rules put on a Gluon kernel take a Triton profile when the caches'
    strides are not multiples of 16 values (`ShapeKey.aligned_cache`), which computes them right."""
    def gluon(profile):
        return profile.warpgroup_mma or profile.keys_as_rows or profile.shared_exchange

    assert gluon(select.select_profile(key, H200).profile)
    unaligned = dataclasses.replace(key, aligned_cache=False)
    chosen = select.select_profile(unaligned, H200).profile
    assert not gluon(chosen) and select.shape_problem(chosen, unaligned) is None
