"""Per-arch rule ladders and the blocklist, as data.

A ladder is an if/elif chain written as rows: the first rule of a ladder whose condition matches
applies its field overrides on top of the analytic default. Every ladder of a kernel is walked in
order, so independent facts (a tile rule, a ROCm stage rule) compose. The split count is not a
rule field: the dispatcher recomputes it for the laddered profile (its warps, tile and stages set
how many programs fit on an SM), clamped into a rule's `splits_range`. The blocklist names
combinations known to fault; the dispatcher checks it last and never returns a match.

Sources of the rows: vLLM #62590/#65341 (sparse kernel, >512 programs, measured on MI300X/MI355X),
SGLang #36330 (multi-token verify on MI355X), both in DESIGN.md; and the H200's tuned table
(docs/profiles-h200.md, v7 kernels), which carries over to other sm90 GPUs (same registers, shared
memory and matrix instructions per SM) as their profiles until `pagedattn tune` measures a table
for them. An sm90 row states the profile fields most tuned buckets of its shape class agreed on;
the buckets that differ are named beside the row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..device import DeviceInfo
from .types import (
    KEYS_ROWS_BLOCK_M, KEYS_ROWS_TILE, KEYS_ROWS_WARPS, SHORT_CLASS, UNIFIED_KEYS_ROWS_FORMS, WGMMA_BLOCK_M, WGMMA_WARPS,
    LaunchProfile, ShapeKey, next_pow2,
)


@dataclass(frozen=True)
class When:
    """A condition over (device, shape); empty tuples and None bounds match anything. A short
    launch's key (query class SHORT_CLASS) also matches conditions written for verify calls: it is
    keyed as one, and a ladder's rows for it come before its verify rows."""

    archs: tuple[str, ...] = ()  # arch names ("gfx942") or vendors ("amd", "nvidia")
    kv_dtypes: tuple[str, ...] = ()
    query_classes: tuple[str, ...] = ()
    groups: tuple[int, ...] = ()
    min_programs: int | None = None  # programs > min_programs
    max_programs: int | None = None  # programs <= max_programs
    min_heads_block: int | None = None  # next_pow2(group) >= min_heads_block
    max_heads_block: int | None = None  # next_pow2(group) < max_heads_block
    min_max_seqlen_q: int | None = None  # max_seqlen_q > min_max_seqlen_q
    max_max_seqlen_q: int | None = None  # max_seqlen_q <= max_max_seqlen_q
    min_kv_len: int | None = None  # kv_len > min_kv_len
    min_keys_per_sm: int | None = None  # programs x kv_len / SMs > min_keys_per_sm (unified: KV work per SM)
    max_keys_per_sm: int | None = None  # programs x kv_len / SMs <= max_keys_per_sm
    head_sizes: tuple[int, ...] = ()
    max_query_rows: int | None = None  # group x max_seqlen_q <= max_query_rows (unified: rows a program packs)
    min_query_rows: int | None = None  # group x max_seqlen_q > min_query_rows
    plain_scores: bool = False  # True: only calls without a sliding window, softcap or sinks

    def matches(self, device: DeviceInfo, key: ShapeKey) -> bool:
        heads_block = next_pow2(key.group)
        checks = (
            not self.archs or device.arch in self.archs or device.vendor in self.archs,
            not self.kv_dtypes or key.kv_dtype in self.kv_dtypes,
            not self.query_classes or key.query_class in self.query_classes
            or (key.query_class == SHORT_CLASS and "verify" in self.query_classes),
            not self.groups or key.group in self.groups,
            self.min_programs is None or key.programs > self.min_programs,
            self.max_programs is None or key.programs <= self.max_programs,
            self.min_heads_block is None or heads_block >= self.min_heads_block,
            self.max_heads_block is None or heads_block < self.max_heads_block,
            self.min_max_seqlen_q is None or key.max_seqlen_q > self.min_max_seqlen_q,
            self.max_max_seqlen_q is None or key.max_seqlen_q <= self.max_max_seqlen_q,
            self.min_kv_len is None or key.kv_len > self.min_kv_len,
            self.min_keys_per_sm is None or key.programs * key.kv_len > self.min_keys_per_sm * device.num_sms,
            self.max_keys_per_sm is None or key.programs * key.kv_len <= self.max_keys_per_sm * device.num_sms,
            not self.head_sizes or key.head_size in self.head_sizes,
            self.max_query_rows is None or key.group * key.max_seqlen_q <= self.max_query_rows,
            self.min_query_rows is None or key.group * key.max_seqlen_q > self.min_query_rows,
            not self.plain_scores or not key.score_mods,
        )
        return all(checks)


@dataclass(frozen=True)
class Rule:
    when: When
    sets: dict = field(default_factory=dict)  # LaunchProfile fields to override (never num_splits)
    splits_range: tuple[int, int] | None = None  # clamp the recomputed split count into [lo, hi]
    source: str = ""

    def __post_init__(self):
        if "num_splits" in self.sets:
            raise ValueError("a rule sets splits through splits_range: the dispatcher recomputes the count")

    def apply(self, profile: LaunchProfile) -> LaunchProfile:
        return LaunchProfile.from_dict(profile.to_dict() | dict(self.sets))


@dataclass(frozen=True)
class Blocked:
    kernel: str
    when: When
    profile: dict  # LaunchProfile fields that, all equal, make the combination fault
    reason: str

    def blocks(self, kernel: str, device: DeviceInfo, key: ShapeKey, profile: LaunchProfile) -> bool:
        if kernel != self.kernel or not self.when.matches(device, key):
            return False
        return all(getattr(profile, name) == value for name, value in self.profile.items())


_SPARSE_PREFILL = 512  # programs (rows x KV heads) above which the seed's prefill-like rules apply
_VLLM = "vLLM #62590/#65341, measured on MI300X/MI355X"
_H200 = "H200 table (docs/profiles-h200.md), for sm90 GPUs without a table"
_BF16 = ("bf16", "fp16")
# the unified keys-as-rows kernel's fields: the 128-key form (and its evidence), shared by its decode and verify
# rules, and the one-warpgroup 64-key form of long decode
_UNIFIED_KEYS_ROWS = {"tile_n": 128, "num_warps": UNIFIED_KEYS_ROWS_FORMS[128], "num_stages": 2,
                      "keys_as_rows": True}
_UNIFIED_KEYS_ROWS_SOURCE = _H200 + "; unified keys-as-rows: perf-notes v16 items 3, 5, 9"
_ONE_WARPGROUP_KEYS_ROWS = _UNIFIED_KEYS_ROWS | {"tile_n": 64, "num_warps": UNIFIED_KEYS_ROWS_FORMS[64]}
_BLOCKED_ROWS = 128  # verify of up to 8 draft tokens at a 16-head group: two 64-row query blocks per sequence
# FP8 verify of up to 64 packed rows takes keys-as-rows above this many keys per SM (sequences x KV heads x
# keys / SMs): three 128-key tiles for its one program per SM; below, the wgmma kernel's 16-key tiles at two
# programs per SM take 4-10 % less time (perf-notes v22 item 3: 155-310 keys per SM; from 496 keys-as-rows
# takes 6-13 % less, or the same)
_KEYS_ROWS_VERIFY_KEYS_PER_SM = 384
# FP8 decode of up to 16 packed rows takes the one-warpgroup keys-as-rows form (64 keys per step, three programs
# per SM) up to this many keys per SM, the 128-key form above (perf-notes v23 item 5: at 496 keys per SM the two
# differ by -3 % to +16 % as their split counts differ; below, the 64-key form is as fast or up to 30 % faster)
_ONE_WARPGROUP_DECODE_KEYS_PER_SM = 384
_KEYS_ROWS_DECODE_MIN_KV = 128  # one 128-key tile; measured from 256 keys (v23 item 5)
_SHORT_SOURCE = _H200 + " (mixed batches' short launches); perf-notes v35 item 1"
# the sparse keys-as-rows kernel's one form (ops/sparse_keys_rows.py), shared by its prefill and decode rows
_SPARSE_KEYS_ROWS = {"block_m": KEYS_ROWS_BLOCK_M, "tile_n": KEYS_ROWS_TILE, "num_warps": KEYS_ROWS_WARPS, "num_stages": 2,
                     "keys_as_rows": True}

LADDERS: dict[str, tuple[tuple[Rule, ...], ...]] = {
    "sparse": (
        # (BLOCK_N, warps) for prefill-like calls: the seed's combined rule, exclusive rows, with
        # sm90 rows before the seed's CUDA row. Groups of at most 16 heads run the shared-exchange
        # kernel (ops/sparse_exchange.py): 16-bit pages with 16-key tiles up to 2,048 programs, 32
        # above (H200 table of 2026-11-30: 1.26-1.36x over the Triton rows); FP8 pages with 32-key
        # tiles (perf-notes v12: 0.096-2.74 ms against the Triton row's 0.140-4.16 ms), except groups
        # of at most 8 at head size 128/256 above 2,048 programs, which run the keys-as-rows kernel
        # (ops/sparse_keys_rows.py; v13 item 8: TP4 / TP8 at 8,192 rows 1.209 / 1.224 ms against the
        # exchange kernel's 1.269 / 1.255; at 520 rows of TP2 it was 40 % slower). Larger groups
        # take the Triton rows. Decode-like FP8 calls (at most 512 programs) at head size 256 and groups
        # of at most 16 run the keys-as-rows kernel with the wave rule's splits (perf-notes v41 item 3):
        # at 64 rows 24q/2kv both tables pick it at 1-2 splits over the analytic default's Triton profile
        # (H200 1.57x, H100 1.29x); at 3q/1kv the H100's does at 4 splits (1.39x), and on the H200 it took
        # 1-8 % more time than the table's Triton profile at 8 splits. Without a table the H100 now runs
        # both at 1.01-1.02x its table's time.
        (
            Rule(When(archs=("gfx942",), kv_dtypes=("bf16", "fp16"), min_programs=_SPARSE_PREFILL, min_heads_block=16),
                 {"tile_n": 32, "num_warps": 2}, source=_VLLM),
            Rule(When(archs=("gfx942",), min_programs=_SPARSE_PREFILL),
                 {"tile_n": 64, "num_warps": 1}, source=_VLLM),
            Rule(When(archs=("gfx950",), min_programs=_SPARSE_PREFILL),
                 {"tile_n": 64, "num_warps": 1}, source=_VLLM),
            Rule(When(archs=("sm90",), kv_dtypes=("fp8",), max_programs=_SPARSE_PREFILL, max_heads_block=32,
                      head_sizes=(256,)),
                 _SPARSE_KEYS_ROWS,
                 source=_H200 + " and the H100's; FP8 sparse decode on keys-as-rows: perf-notes v41 item 3"),
            Rule(When(archs=("sm90",), kv_dtypes=_BF16, min_programs=_SPARSE_PREFILL, max_programs=2048,
                      max_heads_block=32, head_sizes=(64, 128, 256)),
                 {"block_m": 16, "tile_n": 16, "num_warps": 2, "num_stages": 2, "shared_exchange": True}, source=_H200),
            Rule(When(archs=("sm90",), kv_dtypes=_BF16, min_programs=2048, max_heads_block=32, head_sizes=(64, 128, 256)),
                 {"block_m": 16, "tile_n": 32, "num_warps": 2, "num_stages": 2, "shared_exchange": True}, source=_H200),
            Rule(When(archs=("sm90",), kv_dtypes=_BF16, min_programs=_SPARSE_PREFILL),
                 {"tile_n": 32, "num_warps": 2, "num_stages": 2, "addresses_ahead": True}, source=_H200),
            Rule(When(archs=("sm90",), kv_dtypes=("fp8",), min_programs=2048, max_heads_block=16, head_sizes=(128, 256)),
                 _SPARSE_KEYS_ROWS,
                 source=_H200 + "; keys-as-rows: perf-notes v13 item 8, v15 item 3"),
            Rule(When(archs=("sm90",), kv_dtypes=("fp8",), min_programs=_SPARSE_PREFILL, max_heads_block=32,
                      head_sizes=(64, 128, 256)),
                 {"block_m": 16, "tile_n": 32, "num_warps": 2, "num_stages": 2, "shared_exchange": True}, source=_H200),
            Rule(When(archs=("sm90",), kv_dtypes=("fp8",), min_programs=_SPARSE_PREFILL),
                 {"tile_n": 64, "num_warps": 2, "num_stages": 2}, source=_H200),
            Rule(When(archs=("amd", "nvidia"), min_programs=_SPARSE_PREFILL),
                 {"tile_n": 64, "num_warps": 2}, source=_VLLM + " (other ROCm, CUDA)"),
        ),
        # ROCm: 64 KiB of LDS leaves no room for multi-buffering at head size 256.
        (Rule(When(archs=("amd",)), {"num_stages": 1}, source=_VLLM),),
    ),
    "unified": (
        # Multi-token verify at a 16:1 GQA ratio: BLOCK_M=32 is tied to the ratio (BLOCK_Q = 2
        # draft tokens per program), TILE 32, 8-64 segments from CU count and work per segment.
        (
            Rule(When(archs=("gfx950",), groups=(16,), min_max_seqlen_q=1, max_max_seqlen_q=4, min_kv_len=512),
                 {"block_m": 32, "tile_n": 32}, splits_range=(8, 64), source="SGLang #36330, measured on MI355X"),
        ),
        (Rule(When(archs=("amd",)), {"num_stages": 1}, source=_VLLM),),
        # sm90: one row per shape class of the H200 table. Decode and verify at head size 128 with at most
        # 16 packed rows stream 128-token tiles through 2 stages; verify of 17-64 packed rows there (5-8 queries
        # at a group of 4, 3-8 at 8) 64-token tiles 3 deep with the page-table read ahead on the default's blocks
        # (perf-notes v35 items 1-2: 1.00-1.02x the best of 6-8 forms on 8 verify calls of both page types, the
        # analytic default 1.06-1.22x, 16-row blocks, several per sequence, 1.16-2.73x). A mixed batch's short
        # launch (SHORT_CLASS) at head size 64 or 128 and a group of at most 8 runs 16-row blocks with the
        # table's tuned forms for it: BF16 64-token tiles 3 deep, addresses ahead; FP8 128-token tiles 3 deep
        # (v35 items 1-2: beside 48 decodes and 16 verifies of 4, or 64 decodes, 1.00-1.01x the best at a group
        # of 4 and 8, 1.07-1.09x at head size 64, where the default's 32- or 64-row blocks take 1.34-1.88x;
        # beside 24 verifies of 8, whose best block holds all 8 queries, 1.18x at a group of 4 and 1.86-1.94x at
        # 8: the short launch's key cannot tell its queries). Verify at head size 256 with plain scores
        # (and, since v23, decode with 16-bit pages: 3-33 % less time than the Triton kernel's default at 1-64
        # sequences over 256-131,072 keys, within 0.5 % at 64 x 16,384 x 2 KV heads, within 2 % or less time at
        # 64 keys) runs the warpgroup-MMA
        # kernel (ops/verify_wgmma.py), 16-key tiles 4 deep, 16-bit and FP8 pages,
        # 16-bit ones with the page-table read a step ahead (perf-notes v15 item 1: 1-4 % less time there,
        # 0-5 % more with FP8 pages). Buckets that differ (v15 table): 16-bit 16q/1kv at 8,192 and 32,768
        # keys took 5 stages with 13 splits, 2-4 % faster than the wave rule's 12 splits at 4 stages; FP8
        # 16q/1kv took 13 splits, 5-7 % faster. With a window, softcap or sinks, the Triton kernel keeps 4
        # warps (2 programs per SM) and 16/32-token tiles 4 deep, addresses a step ahead; prefill and mixed
        # batches read addresses a step ahead (FP8 mixed also took n128/st2). FP8 decode and verify at head
        # size 256 with plain scores and up to 64 packed rows run the keys-as-rows kernel (ops/unified_keys_rows.py:
        # 128 keys per step, the packed rows as wgmma's N) above 128 keys for decode and, for verify, above 384
        # keys per SM (perf-notes v16 items 3, 5, 9, 10 at B=20 16q/1kv: MTP verify 14-20 % less time than the
        # wgmma kernel at 32,768 and 70,000 keys, 9 % at 8,192, 5 % more at 4,096 and 12-34 % more below; v22
        # item 3: the crossing follows sequences x KV heads x keys, not keys; the single long request at q=1
        # 31 % less than the Triton kernel, at q=4 5 % less than the wgmma kernel at 128 splits; batch decode
        # of 64 sequences 34-44 % less than the Triton kernel at 4,096 and 32,768 keys; v23 item 5: decode of 1-64
        # sequences over 256-4,096 keys 31-46 % less than the Triton kernel's default, measured at 16 packed rows;
        # 17-64 rows below 2,048 keys unmeasured). Decode of at most 16 packed rows above 8,192 keys, or at up to 384
        # keys per SM (v23 item 5), takes its one-warpgroup form (64 keys per step, three
        # programs per SM; perf-notes v19 item 1: 4-11 % less time than 128 keys at 16,384 and 32,768 keys for 64
        # sequences of 16q/1kv or 32q/2kv, 5 % on the single long request at the wave rule's splits; within 2 % at
        # 4,096; 8,192 unmeasured). Verify of 65-128 packed rows (5-8 draft tokens at a 16-head group) runs in
        # query blocks of 64 rows: FP8 pages over 1,024 keys on keys-as-rows, the rest on the wgmma kernel
        # (perf-notes v20 item 1, B=20 16q/1kv, q=5, 6 and 8: FP8 keys-as-rows 4-26 % less time than wgmma blocks at
        # 2,048-32,768 keys, 4 % more at 1,024; BF16 wgmma blocks 11-24 % less than the Triton kernel's default at
        # 1,024-32,768; both 3.6-6.1x less than the Triton profiles the rules gave these calls before).
        (
            Rule(When(archs=("sm90",), query_classes=(SHORT_CLASS,), kv_dtypes=_BF16, head_sizes=(64, 128),
                      max_heads_block=16),
                 {"block_m": 16, "tile_n": 64, "num_stages": 3, "addresses_ahead": True}, source=_SHORT_SOURCE),
            Rule(When(archs=("sm90",), query_classes=(SHORT_CLASS,), kv_dtypes=("fp8",), head_sizes=(64, 128),
                      max_heads_block=16),
                 {"block_m": 16, "tile_n": 128, "num_stages": 3}, source=_SHORT_SOURCE),
            Rule(When(archs=("sm90",), query_classes=("decode", "verify"), head_sizes=(128,), max_query_rows=16),
                 {"tile_n": 128, "num_stages": 2}, source=_H200),
            Rule(When(archs=("sm90",), query_classes=("verify",), head_sizes=(128,), min_query_rows=16,
                      max_query_rows=64),
                 {"tile_n": 64, "num_stages": 3, "addresses_ahead": True}, source=_H200 + "; perf-notes v35 items 1-2"),
            Rule(When(archs=("sm90",), query_classes=("decode",), head_sizes=(256,), kv_dtypes=("fp8",),
                      max_query_rows=16, min_kv_len=8192, plain_scores=True),
                 _ONE_WARPGROUP_KEYS_ROWS, source=_H200 + "; one-warpgroup keys-as-rows: perf-notes v19 item 1"),
            Rule(When(archs=("sm90",), query_classes=("decode",), head_sizes=(256,), kv_dtypes=("fp8",),
                      max_query_rows=16, min_kv_len=_KEYS_ROWS_DECODE_MIN_KV,
                      max_keys_per_sm=_ONE_WARPGROUP_DECODE_KEYS_PER_SM, plain_scores=True),
                 _ONE_WARPGROUP_KEYS_ROWS, source=_H200 + "; one-warpgroup keys-as-rows: perf-notes v23 item 5"),
            Rule(When(archs=("sm90",), query_classes=("decode",), head_sizes=(256,), kv_dtypes=("fp8",),
                      max_query_rows=64, min_kv_len=_KEYS_ROWS_DECODE_MIN_KV, plain_scores=True),
                 _UNIFIED_KEYS_ROWS, source=_UNIFIED_KEYS_ROWS_SOURCE + ", v23 item 5"),
            Rule(When(archs=("sm90",), query_classes=("verify",), head_sizes=(256,), kv_dtypes=("fp8",),
                      max_query_rows=64, min_keys_per_sm=_KEYS_ROWS_VERIFY_KEYS_PER_SM, plain_scores=True),
                 _UNIFIED_KEYS_ROWS, source=_UNIFIED_KEYS_ROWS_SOURCE + ", v22 item 3"),
            Rule(When(archs=("sm90",), query_classes=("verify",), head_sizes=(256,), kv_dtypes=("fp8",),
                      min_query_rows=64, max_query_rows=_BLOCKED_ROWS, min_kv_len=1024, plain_scores=True),
                 _UNIFIED_KEYS_ROWS | {"block_m": 64}, source=_H200 + "; keys-as-rows in query blocks: perf-notes v20 item 1"),
            Rule(When(archs=("sm90",), query_classes=("decode", "verify"), head_sizes=(256,), kv_dtypes=_BF16,
                      max_query_rows=_BLOCKED_ROWS, plain_scores=True),
                 {"block_m": WGMMA_BLOCK_M, "tile_n": 16, "num_warps": WGMMA_WARPS, "num_stages": 4,
                  "warpgroup_mma": True, "addresses_ahead": True}, source=_H200 + "; decode: perf-notes v23 item 5"),
            Rule(When(archs=("sm90",), query_classes=("verify",), head_sizes=(256,),
                      max_query_rows=_BLOCKED_ROWS, plain_scores=True),
                 {"block_m": WGMMA_BLOCK_M, "tile_n": 16, "num_warps": WGMMA_WARPS, "num_stages": 4,
                  "warpgroup_mma": True}, source=_H200),
            Rule(When(archs=("sm90",), query_classes=("verify",), head_sizes=(256,), kv_dtypes=_BF16),
                 {"tile_n": 16, "num_warps": 4, "num_stages": 4, "addresses_ahead": True}, source=_H200),
            Rule(When(archs=("sm90",), query_classes=("verify",), head_sizes=(256,), kv_dtypes=("fp8",)),
                 {"tile_n": 32, "num_warps": 4, "num_stages": 4, "addresses_ahead": True}, source=_H200),
            Rule(When(archs=("sm90",), query_classes=("prefill",)), {"addresses_ahead": True}, source=_H200),
        ),
    ),
}

BLOCKLIST: tuple[Blocked, ...] = (
    Blocked("sparse", When(archs=("gfx942",)), {"tile_n": 32, "num_warps": 1},
            "memory fault on MI300X (vLLM #62590)"),
    Blocked("unified", When(archs=("gfx942",)), {"tile_n": 32, "num_warps": 1},
            "same tile/warp shape faulted the sparse kernel on MI300X; unverified here, kept out"),
)


def apply_ladders(kernel: str, device: DeviceInfo, key: ShapeKey,
                  profile: LaunchProfile) -> tuple[LaunchProfile, list[str], tuple[int, int] | None]:
    """The profile after the first matching rule of each ladder (its split count not yet
    recomputed), the sources applied and the split range of the last rule that has one."""
    applied, splits_range = [], None
    for ladder in LADDERS[kernel]:
        for rule in ladder:
            if rule.when.matches(device, key):
                profile = rule.apply(profile)
                applied.append(rule.source)
                splits_range = rule.splits_range or splits_range
                break
    return profile, applied, splits_range


def blocked_reason(kernel: str, device: DeviceInfo, key: ShapeKey, profile: LaunchProfile) -> str | None:
    for entry in BLOCKLIST:
        if entry.blocks(kernel, device, key, profile):
            return entry.reason
    return None
