"""Input builders and the named workloads shared by tests, tuner and benchmark.

Builders:
  * `make_paged_cache` — K/V caches `[num_blocks, block_size, num_kv_heads, head_size]` filled
    with random normal data, pages assigned to sequences in shuffled order (so a kernel that
    assumes contiguous pages fails), optional FP8 e4m3 quantisation with per-tensor scales.
  * `UnifiedShape.build` — a variable-length batch (prefill chunks, decode and verify queries)
    with `cu_seqlens_q`, `seq_lens` and `block_table` in the vLLM layout.
  * `make_selection` / `SparseShape.build` — per-row top-k selections: a local window of the
    newest tokens plus earlier tokens, where `overlap` is the fraction of the previous row's
    earlier tokens a row keeps (0: independent draws, 1: identical).

Named workloads (`WORKLOADS`) are the shapes of DESIGN.md; each has `cases` at real size and
`tiny` cases that the Triton interpreter runs in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from .profiles.types import cdiv

FP8_MAX = 448.0  # largest finite float8_e4m3fn

DTYPES = {
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
    "fp8": torch.float8_e4m3fn,
    "fp32": torch.float32,
}


def quantize_fp8(x: torch.Tensor) -> tuple[torch.Tensor, float]:
    """Per-tensor FP8 e4m3 quantisation: returns (x_fp8, scale) with x ~= x_fp8 * scale."""
    amax = float(x.abs().amax().float().item())
    scale = max(amax, 1e-12) / FP8_MAX
    return (x.float() / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn), scale


@dataclass
class PagedCache:
    k_cache: torch.Tensor
    v_cache: torch.Tensor
    block_table: torch.Tensor  # [num_seqs, max_blocks] int32
    k_scale: float | None
    v_scale: float | None


def make_paged_cache(
    seq_lens: list[int],
    num_kv_heads: int,
    head_size: int,
    block_size: int,
    kv_dtype: str,
    device: torch.device | str,
    generator: torch.Generator,
    spare_blocks: int = 0,
) -> PagedCache:
    """Random K/V pages for sequences of the given lengths, in shuffled page order."""
    pages = [cdiv(n, block_size) for n in seq_lens]
    num_blocks = sum(pages) + spare_blocks
    page_order = torch.Generator().manual_seed(generator.initial_seed())  # randperm draws on the CPU
    perm = torch.randperm(num_blocks, generator=page_order).to(torch.int32)
    table = torch.zeros(len(seq_lens), max(1, max(pages, default=1)), dtype=torch.int32)
    start = 0
    for i, n in enumerate(pages):
        table[i, :n] = perm[start : start + n]
        start += n
    shape = (num_blocks, block_size, num_kv_heads, head_size)
    caches, scales = [], []
    for _ in range(2):
        data = torch.randn(shape, generator=generator, device=generator.device, dtype=torch.float32)
        data = data.to(device=device, dtype=torch.bfloat16 if kv_dtype == "fp8" else DTYPES[kv_dtype])
        if kv_dtype == "fp8":
            data, scale = quantize_fp8(data)
            scales.append(scale)
        else:
            scales.append(None)
        caches.append(data)
    return PagedCache(caches[0], caches[1], table.to(device), scales[0], scales[1])


def _generator(device: torch.device | str, seed: int) -> torch.Generator:
    dev = torch.device(device)
    gen = torch.Generator(device=dev if dev.type == "cuda" else "cpu")
    gen.manual_seed(seed)
    return gen


def _randn(shape, dtype: str, device, generator: torch.Generator) -> torch.Tensor:
    return torch.randn(shape, generator=generator, device=generator.device).to(device=device, dtype=DTYPES[dtype])


@dataclass
class Inputs:
    """Keyword arguments of one call, plus the work it must do."""

    kwargs: dict
    bytes_moved: int  # each KV byte once (gathered bytes for sparse), Q and out once
    flops: int  # useful QK^T and PV multiply-adds x 2


@dataclass(frozen=True)
class UnifiedShape:
    query_lens: tuple[int, ...]
    kv_lens: tuple[int, ...]
    num_q_heads: int
    num_kv_heads: int
    head_size: int
    block_size: int = 16
    q_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    sliding_window: int | None = None
    softcap: float | None = None
    sinks: bool = False

    kernel = "unified"

    @property
    def group(self) -> int:
        return self.num_q_heads // self.num_kv_heads

    @property
    def max_seqlen_q(self) -> int:
        return max(self.query_lens)

    def _visible_keys(self) -> tuple[int, int]:
        """(KV tokens that must be read, query-key pairs that are visible), over the batch."""
        read = pairs = 0
        for n, kv in zip(self.query_lens, self.kv_lens):
            first = kv - n
            if self.sliding_window is None:
                read += kv
                pairs += n * first + n * (n + 1) // 2
            else:
                w = self.sliding_window
                read += min(kv, n + w - 1)
                pairs += sum(min(w, first + i + 1) for i in range(n))
        return read, pairs

    def bytes_moved(self) -> int:
        read, _ = self._visible_keys()
        kv_bytes = DTYPES[self.kv_dtype].itemsize
        q_bytes = DTYPES[self.q_dtype].itemsize
        kv = 2 * read * self.num_kv_heads * self.head_size * kv_bytes
        return kv + 2 * sum(self.query_lens) * self.num_q_heads * self.head_size * q_bytes

    def flops(self) -> int:
        _, pairs = self._visible_keys()
        return 4 * pairs * self.num_q_heads * self.head_size

    def build(self, device: torch.device | str, seed: int = 0) -> Inputs:
        if len(self.query_lens) != len(self.kv_lens) or any(n > kv for n, kv in zip(self.query_lens, self.kv_lens)):
            raise ValueError("each sequence needs query_len <= kv_len")
        gen = _generator(device, seed)
        cache = make_paged_cache(
            list(self.kv_lens), self.num_kv_heads, self.head_size, self.block_size, self.kv_dtype, device, gen
        )
        num_tokens = sum(self.query_lens)
        cu = torch.tensor([0, *np.cumsum(self.query_lens).tolist()], dtype=torch.int32, device=device)
        kwargs = dict(
            q=_randn((num_tokens, self.num_q_heads, self.head_size), self.q_dtype, device, gen),
            k_cache=cache.k_cache,
            v_cache=cache.v_cache,
            cu_seqlens_q=cu,
            seq_lens=torch.tensor(self.kv_lens, dtype=torch.int32, device=device),
            block_table=cache.block_table,
            max_seqlen_q=self.max_seqlen_q,
            max_seqlen_k=max(self.kv_lens),
            k_scale=cache.k_scale,
            v_scale=cache.v_scale,
            sliding_window=self.sliding_window,
            softcap=self.softcap,
            sinks=(torch.randn(self.num_q_heads, generator=gen, device=gen.device).to(device) if self.sinks else None),
        )
        return Inputs(kwargs, self.bytes_moved(), self.flops())


def make_selection(
    positions: np.ndarray,
    topk: int,
    local_window: int,
    overlap: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Top-k selections for consecutive rows of one request (row i sits at positions[i]).

    Each row takes its `local_window` newest tokens (up to its own position) plus
    `topk - local_window` earlier tokens; of those, round(overlap * n) are kept from the
    previous row's earlier tokens (when still in range) and the rest drawn at random from the
    remaining earlier tokens. Rows with fewer than topk visible tokens take them all and pad with
    -1. Indices are sorted ascending within a row, padding last."""
    if not 0.0 <= overlap <= 1.0:
        raise ValueError(f"overlap must be in [0, 1], got {overlap}")
    out = np.full((len(positions), topk), -1, dtype=np.int32)
    prev = np.empty(0, dtype=np.int64)
    for i, pos in enumerate(positions):
        pos = int(pos)
        if pos + 1 <= topk:
            out[i, : pos + 1] = np.arange(pos + 1)
            prev = np.empty(0, dtype=np.int64)
            continue
        local = np.arange(pos + 1 - local_window, pos + 1)
        n_early = topk - local_window
        early_range = pos + 1 - local_window
        kept = prev[prev < early_range]
        kept = rng.permutation(kept)[: int(round(overlap * n_early))]
        pool = np.setdiff1d(np.arange(early_range), kept, assume_unique=True)
        fresh = rng.choice(pool, size=n_early - len(kept), replace=False)
        early = np.concatenate([kept, fresh])
        prev = early
        out[i] = np.sort(np.concatenate([early, local]))
    return out


@dataclass(frozen=True)
class SparseShape:
    num_requests: int
    request_len: int
    rows_per_request: int
    num_q_heads: int
    num_kv_heads: int
    head_size: int
    topk: int = 2051
    local_window: int = 512
    block_size: int = 16
    q_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    overlap: float = 0.75
    interleave: bool = False  # rows of different requests alternate instead of forming runs

    kernel = "sparse"

    @property
    def group(self) -> int:
        return self.num_q_heads // self.num_kv_heads

    @property
    def rows(self) -> int:
        return self.num_requests * self.rows_per_request

    def _valid_slots(self) -> int:
        first = self.request_len - self.rows_per_request
        return sum(min(self.topk, first + i + 1) for i in range(self.rows_per_request)) * self.num_requests

    def bytes_moved(self) -> int:
        kv_bytes = DTYPES[self.kv_dtype].itemsize
        q_bytes = DTYPES[self.q_dtype].itemsize
        gathered = 2 * self._valid_slots() * self.num_kv_heads * self.head_size * kv_bytes
        return gathered + 2 * self.rows * self.num_q_heads * self.head_size * q_bytes

    def flops(self) -> int:
        return 4 * self._valid_slots() * self.num_q_heads * self.head_size

    def build(self, device: torch.device | str, seed: int = 0) -> Inputs:
        if self.rows_per_request > self.request_len or self.local_window > self.topk:
            raise ValueError("rows_per_request <= request_len and local_window <= topk are required")
        gen = _generator(device, seed)
        rng = np.random.default_rng(seed)
        cache = make_paged_cache(
            [self.request_len] * self.num_requests, self.num_kv_heads, self.head_size, self.block_size,
            self.kv_dtype, device, gen,
        )
        positions = np.arange(self.request_len - self.rows_per_request, self.request_len)
        per_req = [make_selection(positions, self.topk, self.local_window, self.overlap, rng) for _ in range(self.num_requests)]
        req_of_row = np.repeat(np.arange(self.num_requests), self.rows_per_request)
        indices = np.concatenate(per_req)
        if self.interleave:
            order = np.argsort(np.tile(np.arange(self.rows_per_request), self.num_requests), kind="stable")
            indices, req_of_row = indices[order], req_of_row[order]
        kwargs = dict(
            q=_randn((self.rows, self.num_q_heads, self.head_size), self.q_dtype, device, gen),
            k_cache=cache.k_cache,
            v_cache=cache.v_cache,
            indices=torch.from_numpy(indices).to(device),
            block_table=cache.block_table,
            token_to_req=torch.from_numpy(req_of_row.astype(np.int32)).to(device),
            k_scale=cache.k_scale,
            v_scale=cache.v_scale,
        )
        return Inputs(kwargs, self.bytes_moved(), self.flops())


@dataclass(frozen=True)
class Case:
    label: str
    shape: UnifiedShape | SparseShape

    def build(self, device: torch.device | str, seed: int = 0) -> Inputs:
        return self.shape.build(device, seed)


@dataclass(frozen=True)
class Workload:
    name: str
    kernel: str  # "unified" or "sparse"
    description: str
    cases: tuple[Case, ...]
    tiny: tuple[Case, ...] = field(default=())


def _heads_label(hq: int, hkv: int, d: int) -> str:
    return f"{hq}q/{hkv}kv d{d}"


def _uniform(batch: int, q: int, kv: int, hq: int, hkv: int, d: int, kv_dtype: str, **kw) -> UnifiedShape:
    return UnifiedShape((q,) * batch, (kv,) * batch, hq, hkv, d, kv_dtype=kv_dtype, **kw)


def _uniform_cases(batch, q, kvs, layouts, kv_dtypes) -> tuple[Case, ...]:
    cases = []
    for hq, hkv, d in layouts:
        for kv_dtype in kv_dtypes:
            for kv in kvs:
                label = f"B={batch} q={q} kv={kv} {_heads_label(hq, hkv, d)} {kv_dtype}"
                cases.append(Case(label, _uniform(batch, q, kv, hq, hkv, d, kv_dtype)))
    return tuple(cases)


def _mixed_batch(hq, hkv, d, kv_dtype, scale: int = 1) -> UnifiedShape:
    """Prefill chunks, decode tokens and 4-token verify queries in one batch; `scale` shrinks it."""
    prefill = [(1024, 4096), (1024, 8192), (512, 16384), (2048, 2048)]
    decode = [(1, 1024 + 640 * i) for i in range(48)]
    verify = [(4, 2048 + 1792 * i) for i in range(16)]
    seqs = prefill + decode + verify
    if scale > 1:
        shrunk = [(max(1, n // scale) if n > 4 else n, kv // scale) for n, kv in seqs[::scale]]
        seqs = [(n, max(n, kv)) for n, kv in shrunk]
    return UnifiedShape(tuple(n for n, _ in seqs), tuple(kv for _, kv in seqs), hq, hkv, d, kv_dtype=kv_dtype)


def _sparse_cases(request_len, rows_list, layouts, kv_dtypes, num_requests=2, **kw) -> tuple[Case, ...]:
    cases = []
    for hq, hkv, d in layouts:
        for kv_dtype in kv_dtypes:
            for rows in rows_list:
                label = f"rows={rows} {_heads_label(hq, hkv, d)} {kv_dtype}"
                shape = SparseShape(num_requests, request_len, rows // num_requests, hq, hkv, d, kv_dtype=kv_dtype, **kw)
                cases.append(Case(label, shape))
    return tuple(cases)


MTP_LAYOUTS = ((16, 1, 256), (32, 2, 256))
GQA_LAYOUT = ((32, 8, 128),)
SPARSE_LAYOUTS = ((24, 2, 256), (12, 1, 256), (6, 1, 256), (3, 1, 256))  # TP1, TP2, TP4, TP8
_TINY_SPARSE = dict(topk=40, local_window=8)

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "mtp-verify",
            "unified",
            "speculative verify: B=20, 4 draft tokens, 16q/1kv and 32q/2kv, D=256, page 16, BF16 Q, FP8 and BF16 K/V",
            _uniform_cases(20, 4, (8192, 32768, 70000), MTP_LAYOUTS, ("fp8", "bf16")),
            _uniform_cases(2, 4, (37, 100), ((16, 1, 32), (32, 2, 32)), ("fp8", "bf16")),
        ),
        Workload(
            "gqa-decode",
            "unified",
            "decode: B=64, q=1, 32q/8kv, D=128, page 16, BF16",
            _uniform_cases(64, 1, (4096, 32768), GQA_LAYOUT, ("bf16",)),
            _uniform_cases(3, 1, (1, 70), ((8, 2, 64),), ("bf16",)),
        ),
        Workload(
            "gqa-verify",
            "unified",
            "verify: B=64, q=4, 32q/8kv, D=128, page 16, BF16",
            _uniform_cases(64, 4, (4096, 32768), GQA_LAYOUT, ("bf16",)),
            _uniform_cases(3, 4, (4, 70), ((8, 2, 64),), ("bf16",)),
        ),
        Workload(
            "long-request",
            "unified",
            "one request, 131,072 keys, q=1 and q=4: 32q/8kv D=128 BF16 and 16q/1kv D=256 FP8",
            _uniform_cases(1, 1, (131072,), GQA_LAYOUT, ("bf16",))
            + _uniform_cases(1, 4, (131072,), GQA_LAYOUT, ("bf16",))
            + _uniform_cases(1, 1, (131072,), MTP_LAYOUTS[:1], ("fp8",))
            + _uniform_cases(1, 4, (131072,), MTP_LAYOUTS[:1], ("fp8",)),
            _uniform_cases(1, 1, (300,), ((8, 2, 64),), ("bf16",))
            + _uniform_cases(1, 4, (300,), ((16, 1, 32),), ("fp8",)),
        ),
        Workload(
            "mixed-batch",
            "unified",
            "4 prefill chunks + 48 decodes + 16 verifies (q=4), 32q/8kv, D=128, BF16 and FP8",
            tuple(Case(f"mixed 32q/8kv d128 {dt}", _mixed_batch(32, 8, 128, dt)) for dt in ("bf16", "fp8")),
            tuple(Case(f"mixed 8q/2kv d64 {dt}", _mixed_batch(8, 2, 64, dt, scale=16)) for dt in ("bf16", "fp8")),
        ),
        Workload(
            "dense-prefill",
            "unified",
            "causal prefill: B=4 x 8,192 tokens, 32q/8kv, D=128, BF16",
            (Case("B=4 q=kv=8192 32q/8kv d128 bf16", _uniform(4, 8192, 8192, 32, 8, 128, "bf16")),),
            (Case("B=2 q=kv=40 8q/2kv d64 bf16", _uniform(2, 40, 40, 8, 2, 64, "bf16")),),
        ),
        Workload(
            "sparse-prefill",
            "sparse",
            "top-k 2,051 (512 local) from two 16,384-token requests, D=256, page 16: TP1 24q/2kv, TP2 12q/1kv, "
            "TP4 6q/1kv, TP8 3q/1kv; 520 and 8,192 rows; BF16 and FP8",
            _sparse_cases(16384, (520, 8192), SPARSE_LAYOUTS, ("bf16", "fp8")),
            _sparse_cases(96, (8,), ((24, 2, 32), (3, 1, 32), (5, 1, 32)), ("bf16", "fp8"), **_TINY_SPARSE),
        ),
        Workload(
            "sparse-decode",
            "sparse",
            "top-k 2,051 decode: one row per request, 64 requests of 32,768 tokens, TP1 and TP8, BF16 and FP8",
            _sparse_cases(32768, (64,), (SPARSE_LAYOUTS[0], SPARSE_LAYOUTS[3]), ("bf16", "fp8"), num_requests=64),
            _sparse_cases(120, (4,), ((24, 2, 32), (3, 1, 32)), ("bf16", "fp8"), num_requests=4, **_TINY_SPARSE),
        ),
    )
}


def get_workload(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise ValueError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}") from None


def with_rows(case: Case, rows: int) -> Case:
    """The same sparse case at another row count (the tuner's row sweep)."""
    shape = case.shape
    if not isinstance(shape, SparseShape):
        raise TypeError("with_rows applies to sparse cases")
    per_req = max(1, math.ceil(rows / shape.num_requests))
    new = replace(shape, rows_per_request=min(per_req, shape.request_len))
    return Case(case.label.replace(f"rows={shape.rows}", f"rows={new.rows}"), new)
