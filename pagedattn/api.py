"""Public entry points: argument checks, profile selection, and the torch.library custom ops.

The hot path reads only host-known shapes (no device synchronisation), so a call can be captured
in a CUDA graph and traced by torch.compile. Checks that would need tensor *contents*
(`max_seqlen_q` against `cu_seqlens_q`, monotone offsets, `seq_lens >= query lengths`) cost a
device read, so they run only when content checks are on: `set_content_checks(True)` or the
environment variable PAGEDATTN_CHECK_CONTENTS=1. Invalid page ids and indices inside tensors are
masked by the kernels either way, never read.

Both kernels are registered as torch.library custom ops (with fake implementations), and calls
that torch.compile traces, or that run under a dispatch mode or on fake or meta tensors, go
through them; a plain eager call launches directly, since the op's eager dispatch alone takes
~95 us of host time (`_through_dispatcher`).
"""

from __future__ import annotations

import os
from typing import Optional

import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode

from .device import DeviceInfo
from .interpreter import interpreter_active
from .ops.common import scale_args
from .ops.sparse import launch_sparse_attention
from .ops.sparse_exchange import launch_sparse_exchange
from .ops.sparse_keys_rows import launch_sparse_keys_rows
from .ops.unified import launch_unified_attention
from .ops.unified_keys_rows import launch_unified_keys_rows
from .ops.verify_wgmma import launch_verify_wgmma
from .profiles.select import ALL_QUERIES, PlannedLaunch, Selection, select_profile, unified_launch_plan
from .profiles.types import LaunchProfile, ShapeKey, query_class

Q_DTYPES = (torch.bfloat16, torch.float16)
KV_DTYPES = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float8_e4m3fn: "fp8"}
MAX_HEAD_SIZE = 256

_content_checks = os.environ.get("PAGEDATTN_CHECK_CONTENTS", "0") not in ("", "0")


def set_content_checks(enabled: bool) -> None:
    """Turn on checks that read index tensors on the host (one device sync per call)."""
    global _content_checks
    _content_checks = bool(enabled)


# --------------------------------------------------------------------------- argument checks


def _tensor(name: str, t, rank: int, dtypes: tuple, device: torch.device | None) -> None:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dim() != rank:
        raise ValueError(f"{name} must have {rank} dimensions, got shape {tuple(t.shape)}")
    if t.dtype not in dtypes:
        raise TypeError(f"{name} must have dtype in ({', '.join(str(d) for d in dtypes)}), got {t.dtype}")
    if device is not None and t.device != device:
        raise ValueError(f"{name} is on {t.device}, expected {device} (the device of q)")
    if t.numel() and t.stride(-1) != 1:
        raise ValueError(f"{name} must have a unit stride in its last dimension, got strides {t.stride()}")


def _scale(name: str, scale, device: torch.device) -> None:
    if scale is None:
        return
    if isinstance(scale, torch.Tensor):
        if scale.numel() != 1 or scale.dtype != torch.float32 or scale.device != device:
            raise ValueError(f"{name} must be a float or a 1-element float32 tensor on {device}, got "
                             f"{scale.dtype} with {scale.numel()} elements on {scale.device}")
    elif not isinstance(scale, (int, float)) or not scale > 0:
        raise ValueError(f"{name} must be a positive float or a 1-element tensor, got {scale!r}")


def _positive(name: str, value, kind=(int, float)) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, kind) or not value > 0):
        raise ValueError(f"{name} must be a positive {'int' if kind is int else 'number'} or None, got {value!r}")


def _check_caches(q, k_cache, v_cache) -> str:
    device = q.device
    _tensor("q", q, 3, Q_DTYPES, None)
    if device.type != "cuda" and not interpreter_active():
        raise ValueError(f"q is on {device}: the kernels need CUDA tensors (or TRITON_INTERPRET=1 for CPU tensors)")
    _tensor("k_cache", k_cache, 4, tuple(KV_DTYPES), device)
    _tensor("v_cache", v_cache, 4, tuple(KV_DTYPES), device)
    if v_cache.shape != k_cache.shape or v_cache.dtype != k_cache.dtype:
        raise ValueError(f"v_cache must match k_cache: {tuple(v_cache.shape)} {v_cache.dtype} vs "
                         f"{tuple(k_cache.shape)} {k_cache.dtype}")
    for name, cache in (("k_cache", k_cache), ("v_cache", v_cache)):
        reach = (cache.shape[1] - 1) * cache.stride(1) + (cache.shape[2] - 1) * cache.stride(2)
        if reach >= 2**31:
            raise ValueError(f"{name} strides {cache.stride()} put {reach} elements between a block's first and "
                             "last slot/head; the kernels address within a block in 32 bits: use the "
                             "[num_blocks, block_size, num_kv_heads, head_size] order (e.g. a contiguous cache)")
    if k_cache.dtype in Q_DTYPES and k_cache.dtype != q.dtype:
        raise TypeError(f"16-bit k_cache/v_cache must have the dtype of q ({q.dtype}), got {k_cache.dtype}")
    head_size = q.shape[2]
    if k_cache.shape[3] != head_size:
        raise ValueError(f"k_cache head size {k_cache.shape[3]} differs from q head size {head_size}")
    if not 16 <= head_size <= MAX_HEAD_SIZE:
        raise ValueError(f"head size must be in [16, {MAX_HEAD_SIZE}], got {head_size}")
    if q.shape[1] % k_cache.shape[2]:
        raise ValueError(f"num_q_heads ({q.shape[1]}) must be a multiple of num_kv_heads ({k_cache.shape[2]})")
    return KV_DTYPES[k_cache.dtype]


def _check_scales_and_profile(kv_dtype: str, device, softmax_scale, k_scale, v_scale, profile) -> None:
    _positive("softmax_scale", softmax_scale)
    _scale("k_scale", k_scale, device)
    _scale("v_scale", v_scale, device)
    if (k_scale is not None or v_scale is not None) and kv_dtype != "fp8":
        raise ValueError("k_scale/v_scale apply to float8_e4m3fn caches only")
    if profile is not None and not isinstance(profile, LaunchProfile):
        raise TypeError(f"profile must be a LaunchProfile or None, got {type(profile).__name__}")


def _check_out(out, q) -> torch.Tensor:
    if out is None:
        return torch.empty_like(q)
    _tensor("out", out, 3, (q.dtype,), q.device)
    if out.shape != q.shape:
        raise ValueError(f"out must have the shape of q {tuple(q.shape)}, got {tuple(out.shape)}")
    return out


def _check_unified_contents(cu_seqlens_q, seq_lens, max_seqlen_q) -> None:
    cu = cu_seqlens_q.cpu()
    q_lens = cu[1:] - cu[:-1]
    if int(cu[0]) != 0 or bool((q_lens < 0).any()):
        raise ValueError("cu_seqlens_q must start at 0 and be non-decreasing")
    if q_lens.numel() and int(q_lens.max()) > max_seqlen_q:
        raise ValueError(f"max_seqlen_q={max_seqlen_q} is smaller than a sequence's query length "
                         f"({int(q_lens.max())})")
    if bool((seq_lens.cpu() < q_lens).any()):
        raise ValueError("seq_lens must be >= each sequence's query length (queries sit at the end)")


# --------------------------------------------------------------------------- profile selection


def has_score_mods(sliding_window=None, softcap=None, sinks=None, **_) -> bool:
    """Whether a unified call (its keyword arguments) modifies scores: window, softcap or sinks."""
    return sliding_window is not None or softcap is not None or sinks is not None


def copy_aligned(cache) -> bool:
    """Whether the Gluon kernels can copy `cache` in 16-byte pieces (`ShapeKey.aligned_cache`): its
    data starts a multiple of 16 bytes into its storage (whose allocation is aligned) and its block,
    slot and head strides are multiples of 16 values. Read from the storage offset, not the pointer,
    so that fake tensors (torch.compile's tracing) answer too."""
    return cache.storage_offset() * cache.element_size() % 16 == 0 and all(s % 16 == 0 for s in cache.stride()[:3])


def _caches_aligned(k_cache, v_cache) -> bool:
    return copy_aligned(k_cache) and (v_cache is None or copy_aligned(v_cache))


def unified_shape_key(q, k_cache, block_table, max_seqlen_q: int, max_seqlen_k: int | None,
                      score_mods: bool = False, v_cache=None) -> ShapeKey:
    num_blocks, block_size, num_kv_heads, head_size = k_cache.shape
    kv_len = max_seqlen_k if max_seqlen_k is not None else block_table.shape[1] * block_size
    return ShapeKey("unified", KV_DTYPES[k_cache.dtype], head_size, q.shape[1] // num_kv_heads,
                    query_class(max_seqlen_q), block_table.shape[0], max_seqlen_q, q.shape[0], num_kv_heads, kv_len,
                    score_mods, _caches_aligned(k_cache, v_cache))


def sparse_shape_key(q, k_cache, indices, v_cache=None) -> ShapeKey:
    num_rows = q.shape[0]
    num_kv_heads = k_cache.shape[2]
    return ShapeKey("sparse", KV_DTYPES[k_cache.dtype], q.shape[2], q.shape[1] // num_kv_heads, "decode",
                    num_rows, 1, num_rows, num_kv_heads, indices.shape[1],
                    aligned_cache=_caches_aligned(k_cache, v_cache))


def choose_unified_profile(q, k_cache, block_table, max_seqlen_q, max_seqlen_k=None, profile=None,
                           score_mods: bool = False, v_cache=None) -> Selection:
    key = unified_shape_key(q, k_cache, block_table, max_seqlen_q, max_seqlen_k, score_mods, v_cache)
    return select_profile(key, DeviceInfo.current(q.device.index if q.is_cuda else None), profile)


def choose_unified_plan(q, k_cache, block_table, max_seqlen_q, max_seqlen_k=None, profile=None,
                        score_mods: bool = False, v_cache=None) -> tuple[PlannedLaunch, ...]:
    """The launches `unified_attention` makes for this call (`select.unified_launch_plan`)."""
    key = unified_shape_key(q, k_cache, block_table, max_seqlen_q, max_seqlen_k, score_mods, v_cache)
    return unified_launch_plan(key, DeviceInfo.current(q.device.index if q.is_cuda else None), profile)


def choose_sparse_profile(q, k_cache, indices, profile=None, v_cache=None) -> Selection:
    key = sparse_shape_key(q, k_cache, indices, v_cache)
    return select_profile(key, DeviceInfo.current(q.device.index if q.is_cuda else None), profile)


# --------------------------------------------------------------------------- custom ops


def _given_scale(tensor: Optional[torch.Tensor], value: float):
    """A custom op's per-tensor scale as the launchers take it: the device tensor when one was
    passed (read by the kernel, no host sync), else the float."""
    return tensor if tensor is not None else value


def _unified_launch(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, out: torch.Tensor,
    cu_seqlens_q: torch.Tensor, seq_lens: torch.Tensor, block_table: torch.Tensor,
    sinks: Optional[torch.Tensor], k_scale_tensor: Optional[torch.Tensor], v_scale_tensor: Optional[torch.Tensor],
    k_scale: float, v_scale: float, softmax_scale: float, softcap: float, sliding_window: int, max_seqlen_q: int,
    profile: list[int], queries_above: int, queries_upto: int,
) -> None:
    chosen = LaunchProfile.from_ints(profile)
    k_scale_given, v_scale_given = _given_scale(k_scale_tensor, k_scale), _given_scale(v_scale_tensor, v_scale)
    if chosen.warpgroup_mma or chosen.keys_as_rows:  # the profile layer admits them only without window, softcap, sinks
        if (queries_above, queries_upto) != (0, ALL_QUERIES):
            raise ValueError(f"profile {chosen.short()} runs a Gluon kernel, which takes every sequence of the call")
        launch = launch_verify_wgmma if chosen.warpgroup_mma else launch_unified_keys_rows
        launch(q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, block_table, max_seqlen_q=max_seqlen_q,
               softmax_scale=softmax_scale, k_scale=k_scale_given, v_scale=v_scale_given, profile=chosen)
        return
    launch_unified_attention(
        q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, block_table,
        softmax_scale=softmax_scale,
        k_scale=k_scale_given,
        v_scale=v_scale_given,
        sliding_window=sliding_window or None, softcap=softcap or None, sinks=sinks, profile=chosen,
        queries_above=queries_above, queries_upto=queries_upto,
    )


_unified_op = torch.library.custom_op("pagedattn::unified_attention", mutates_args=("out",))(_unified_launch)


@_unified_op.register_fake
def _(q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, block_table, sinks, k_scale_tensor, v_scale_tensor,
      k_scale, v_scale, softmax_scale, softcap, sliding_window, max_seqlen_q, profile, queries_above,
      queries_upto) -> None:
    return None


def _sparse_launch(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, out: torch.Tensor,
    indices: torch.Tensor, block_table: torch.Tensor, token_to_req: torch.Tensor, counts: Optional[torch.Tensor],
    k_scale_tensor: Optional[torch.Tensor], v_scale_tensor: Optional[torch.Tensor],
    k_scale: float, v_scale: float, softmax_scale: float, profile: list[int],
) -> None:
    chosen = LaunchProfile.from_ints(profile)
    launch = launch_sparse_keys_rows if chosen.keys_as_rows else \
        launch_sparse_exchange if chosen.shared_exchange else launch_sparse_attention
    launch(
        q, k_cache, v_cache, out, indices, block_table, token_to_req, counts,
        softmax_scale=softmax_scale,
        k_scale=_given_scale(k_scale_tensor, k_scale),
        v_scale=_given_scale(v_scale_tensor, v_scale),
        profile=chosen,
    )


_sparse_op = torch.library.custom_op("pagedattn::sparse_attention", mutates_args=("out",))(_sparse_launch)


@_sparse_op.register_fake
def _(q, k_cache, v_cache, out, indices, block_table, token_to_req, counts, k_scale_tensor, v_scale_tensor,
      k_scale, v_scale, softmax_scale, profile) -> None:
    return None


def _through_dispatcher(q: torch.Tensor) -> bool:
    """Whether a call goes through the registered custom op (torch.compile, export, fake or meta
    tensors, an active dispatch mode such as FakeTensorMode or FlopCounterMode) rather than to the
    launcher directly: the op's eager dispatch costs ~95 us of host time per call (perf-notes v23
    item 3), about what the rest of the call takes."""
    return (torch.compiler.is_compiling() or type(q) is not torch.Tensor or q.is_meta
            or _get_current_dispatch_mode() is not None)


# --------------------------------------------------------------------------- public functions


def unified_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    *,
    cu_seqlens_q: torch.Tensor,
    seq_lens: torch.Tensor,
    block_table: torch.Tensor,
    max_seqlen_q: int,
    max_seqlen_k: int | None = None,
    softmax_scale: float | None = None,
    k_scale: float | torch.Tensor | None = None,
    v_scale: float | torch.Tensor | None = None,
    sliding_window: int | None = None,
    softcap: float | None = None,
    sinks: torch.Tensor | None = None,
    out: torch.Tensor | None = None,
    profile: LaunchProfile | None = None,
) -> torch.Tensor:
    """Causal paged attention over a batch mixing prefill chunks, decode and verify queries.

    q/out [num_tokens, num_q_heads, head_size] (bf16/fp16); k_cache/v_cache [num_blocks,
    block_size, num_kv_heads, head_size] (q's dtype or float8_e4m3fn with k_scale/v_scale; any
    strides with a unit last one, as long as one block's slots and heads span < 2**31 elements);
    cu_seqlens_q [batch+1] int32; seq_lens [batch] int32 (KV length including the queries);
    block_table [batch, max_blocks] int32. Query i of a sequence with n queries and KV length L
    sits at position L - n + i and sees keys up to it (within `sliding_window` if given).
    """
    kv_dtype = _check_caches(q, k_cache, v_cache)
    device = q.device
    _tensor("cu_seqlens_q", cu_seqlens_q, 1, (torch.int32,), device)
    _tensor("seq_lens", seq_lens, 1, (torch.int32,), device)
    _tensor("block_table", block_table, 2, (torch.int32,), device)
    batch = seq_lens.shape[0]
    if cu_seqlens_q.shape[0] != batch + 1:
        raise ValueError(f"cu_seqlens_q must have batch+1 = {batch + 1} entries (seq_lens has {batch}), "
                         f"got {cu_seqlens_q.shape[0]}")
    if block_table.shape[0] != batch:
        raise ValueError(f"block_table must have one row per sequence ({batch}), got {block_table.shape[0]}")
    _positive("max_seqlen_q", max_seqlen_q, int)
    _positive("max_seqlen_k", max_seqlen_k, int)
    _positive("sliding_window", sliding_window, int)
    _positive("softcap", softcap)
    _check_scales_and_profile(kv_dtype, device, softmax_scale, k_scale, v_scale, profile)
    if sinks is not None:
        _tensor("sinks", sinks, 1, (torch.float32,), device)
        if sinks.shape[0] != q.shape[1]:
            raise ValueError(f"sinks must have one logit per query head ({q.shape[1]}), got {sinks.shape[0]}")
    out = _check_out(out, q)
    if _content_checks and not torch.compiler.is_compiling():
        _check_unified_contents(cu_seqlens_q, seq_lens, max_seqlen_q)
    plan = choose_unified_plan(q, k_cache, block_table, max_seqlen_q, max_seqlen_k, profile,
                               has_score_mods(sliding_window, softcap, sinks), v_cache)
    return launch_unified_plan(plan, q, k_cache, v_cache, cu_seqlens_q=cu_seqlens_q, seq_lens=seq_lens,
                               block_table=block_table, max_seqlen_q=max_seqlen_q, softmax_scale=softmax_scale,
                               k_scale=k_scale, v_scale=v_scale, sliding_window=sliding_window, softcap=softcap,
                               sinks=sinks, out=out)


def launch_unified_plan(plan: tuple[PlannedLaunch, ...], q, k_cache, v_cache, *, cu_seqlens_q, seq_lens, block_table,
                        max_seqlen_q: int, out: torch.Tensor, softmax_scale=None, k_scale=None, v_scale=None,
                        sliding_window=None, softcap=None, sinks=None, max_seqlen_k=None) -> torch.Tensor:
    """Make `plan`'s launches over checked arguments (`unified_attention`'s; max_seqlen_k only
    shapes the plan); the tuner times one launch of a plan alone through it."""
    k_t, k_v, _ = scale_args(k_scale)
    v_t, v_v, _ = scale_args(v_scale)
    launch = torch.ops.pagedattn.unified_attention if _through_dispatcher(q) else _unified_launch
    for planned in plan:
        launch(
            q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, block_table, sinks, k_t, v_t, k_v, v_v,
            float(q.shape[2] ** -0.5 if softmax_scale is None else softmax_scale),
            float(softcap or 0.0), int(sliding_window or 0), max_seqlen_q, planned.selection.profile.to_ints(),
            planned.queries_above, planned.queries_upto,
        )
    return out


def sparse_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    *,
    indices: torch.Tensor,
    block_table: torch.Tensor,
    token_to_req: torch.Tensor,
    softmax_scale: float | None = None,
    k_scale: float | torch.Tensor | None = None,
    v_scale: float | torch.Tensor | None = None,
    counts: torch.Tensor | None = None,
    out: torch.Tensor | None = None,
    profile: LaunchProfile | None = None,
) -> torch.Tensor:
    """Each row of q [rows, num_q_heads, head_size] attends to the tokens its `indices` row lists.

    indices [rows, topk] int32: logical positions in the row's request (token_to_req [rows]
    int32 -> row of block_table); -1 marks an unused slot. counts [rows] int32 (optional): only
    the first counts[row] slots are used. Invalid slots are masked; a row with none gives 0.
    """
    kv_dtype = _check_caches(q, k_cache, v_cache)
    device = q.device
    _tensor("indices", indices, 2, (torch.int32,), device)
    _tensor("block_table", block_table, 2, (torch.int32,), device)
    _tensor("token_to_req", token_to_req, 1, (torch.int32,), device)
    rows = q.shape[0]
    if indices.shape[0] != rows:
        raise ValueError(f"indices must have one row per query row ({rows}), got {indices.shape[0]}")
    if token_to_req.shape[0] != rows:
        raise ValueError(f"token_to_req must have one entry per query row ({rows}), got {token_to_req.shape[0]}")
    if counts is not None:
        _tensor("counts", counts, 1, (torch.int32,), device)
        if counts.shape[0] != rows:
            raise ValueError(f"counts must have one entry per query row ({rows}), got {counts.shape[0]}")
    if k_cache.shape[0] * k_cache.shape[1] >= 2**31:
        raise ValueError("k_cache holds 2**31 tokens or more; sparse token ids are int32")
    _check_scales_and_profile(kv_dtype, device, softmax_scale, k_scale, v_scale, profile)
    out = _check_out(out, q)
    chosen = choose_sparse_profile(q, k_cache, indices, profile, v_cache).profile
    k_t, k_v, _ = scale_args(k_scale)
    v_t, v_v, _ = scale_args(v_scale)
    launch = torch.ops.pagedattn.sparse_attention if _through_dispatcher(q) else _sparse_launch
    launch(
        q, k_cache, v_cache, out, indices, block_table, token_to_req, counts, k_t, v_t, k_v, v_v,
        float(q.shape[2] ** -0.5 if softmax_scale is None else softmax_scale), chosen.to_ints(),
    )
    return out
