"""Launch parameters as values.

`LaunchProfile` holds every launch parameter the kernels take; a launcher receives one and
decides nothing. `ShapeKey` is what the dispatcher looks a profile up by: only host-known shape
properties (tensor shapes, dtypes, `max_seqlen_q`/`max_seqlen_k`), never tensor contents, so a
lookup needs no device synchronisation and is stable under CUDA-graph capture.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

KERNELS = ("unified", "sparse")
MAX_STAGES = 6  # software-pipelining depth a profile may ask for
WGMMA_BLOCK_M = 64  # rows of the warpgroup-MMA verify kernel's program: one warpgroup's wgmma height
WGMMA_WARPS = 4  # one warpgroup
WGMMA_MIN_STAGES = 3  # its K/V ring: two tiles consumed per loop step while the next copies land
EXCHANGE_BLOCK_M = 16  # rows of the sparse shared-exchange kernel's program: one mma.sync row block
EXCHANGE_WARPS = 2  # its two warps: each takes half of a tile's keys and half of O's columns
EXCHANGE_MIN_STAGES = 2  # its K/V ring: one tile computed while the next one's copies land
KEYS_ROWS_BLOCK_M = 16  # the sparse keys-as-rows kernel's largest group (its heads are wgmma's N, <= 16)
KEYS_ROWS_TILE = 64  # its keys per step: one wgmma's rows
KEYS_ROWS_WARPS = 4  # one warpgroup
# the unified keys-as-rows kernel's two forms, keys per step -> warps (16 keys per warp, 64 wgmma rows per
# warpgroup): two warpgroups split O^T's head dimension; one owns all of it, so its packed rows are fewer
UNIFIED_KEYS_ROWS_FORMS = {128: 8, 64: 4}
UNIFIED_KEYS_ROWS_MAX_M = {128: 64, 64: 32}  # packed rows (wgmma's N) each form takes: O^T's registers


def next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class LaunchProfile:
    """Launch parameters of one kernel call.

    block_m     rows of a program's query block. Unified: BLOCK_Q = block_m // group query tokens
                x the group's heads; sparse: the heads of one KV group (>= group).
    tile_n      KV tokens (unified) or selected indices (sparse) per inner-loop step.
    num_splits  KV segments per query block; 1 = single pass (no workspace, no merge).
    num_warps   warps per program.
    num_stages  software-pipelining depth of the KV loads.
    kv_major    compute S^T = K Q^T and O^T = V^T P^T (K and V feed the matrix unit from
                registers, so FP8 pages are upcast in registers instead of being staged twice
                through shared memory); False = the row-major S = Q K^T form.
    addresses_ahead  the KV loop reads the next tile's page-table entries (sparse: token ids) a
                step ahead into registers, so num_stages - 1 K/V tiles stay in flight instead of
                one, at the price of a tile buffer, registers and an exposed L2 read per step
                (ops/common.py). On the H200 it pays for verify (FP8 32-token tiles, BF16 16-token
                tiles at 4 stages) and prefill, and a little for sparse BF16 at 2 stages. With
                warpgroup_mma it only moves the page-table read a loop step earlier (the ring is
                the same): 1-4 % less time with 16-bit pages, 0-5 % more with FP8 pages on the H200.
    warpgroup_mma  unified only: run ops/verify_wgmma.py, the Gluon kernel on Hopper's warpgroup
                matrix unit (sm90; no window/softcap/sinks: `select.shape_problem` says which;
                more than 64 // group queries run in several blocks). block_m 64 and 4 warps
                (one warpgroup); num_stages is its K/V ring depth (>= 3); kv_major does not apply
                and stays False.
    shared_exchange  sparse only: run ops/sparse_exchange.py, the Gluon kernel whose two warps
                exchange P and their row maxima through shared memory once per tile (sm90; groups
                of at most 16 heads: `select.exchange_problem`). block_m 16 and 2 warps;
                num_stages is its K/V ring depth (>= 2); kv_major and addresses_ahead do not apply
                (token ids are always read a step ahead) and stay False.
    keys_as_rows  run a Gluon kernel whose wgmma rows are keys (sm90, FP8 pages; kv_major and
                addresses_ahead do not apply and stay False; num_stages is its K/V ring depth, >= 2).
                Sparse: ops/sparse_keys_rows.py, 64 selected keys per step, N = the group's heads
                (head size 128 or 256, groups of at most 16: `select.keys_rows_problem`); block_m
                16, tile_n 64, 4 warps (one warpgroup). Unified: ops/unified_keys_rows.py, N = block_m
                packed query rows (head size 256, no window/softcap/sinks:
                `select.unified_keys_rows_problem`; a sequence with more than block_m // group
                queries runs in several blocks); tile_n 128 with 8 warps (two warpgroups, block_m
                16 to 64) or tile_n 64 with 4 warps (one warpgroup, block_m 16 to 32, up to three
                programs per SM).
    """

    block_m: int
    tile_n: int
    num_splits: int = 1
    num_warps: int = 4
    num_stages: int = 2
    kv_major: bool = False
    addresses_ahead: bool = False
    warpgroup_mma: bool = False
    shared_exchange: bool = False
    keys_as_rows: bool = False

    def __post_init__(self) -> None:
        for name in ("block_m", "tile_n"):
            value = getattr(self, name)
            if value < 16 or value & (value - 1):
                raise ValueError(f"LaunchProfile.{name} must be a power of two >= 16, got {value}")
        if self.num_splits < 1:
            raise ValueError(f"LaunchProfile.num_splits must be >= 1, got {self.num_splits}")
        if self.num_warps not in (1, 2, 4, 8, 16):
            raise ValueError(f"LaunchProfile.num_warps must be 1, 2, 4, 8 or 16, got {self.num_warps}")
        if not 1 <= self.num_stages <= MAX_STAGES:
            raise ValueError(f"LaunchProfile.num_stages must be in 1..{MAX_STAGES}, got {self.num_stages}")

    def block_q(self, group: int) -> int:
        """Query tokens packed per unified program."""
        return max(1, self.block_m // group)

    def query_blocks(self, group: int, max_seqlen_q: int) -> int:
        """Query blocks per sequence of the Gluon unified kernels' grids (a sequence's up to
        max_seqlen_q tokens, block_q per block; the split rule's model of the grid uses it too)."""
        return cdiv(max_seqlen_q, self.block_q(group))

    def to_dict(self) -> dict:
        """Every field by name (ints and bools: no deep copy, the dispatcher builds these per call)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def to_ints(self) -> list[int]:
        """Every field as an int, in declaration order: the form the custom ops take (`api.py`)."""
        return [int(getattr(self, f.name)) for f in fields(self)]

    @staticmethod
    def from_ints(values: list[int]) -> "LaunchProfile":
        """Inverse of `to_ints` (flags come back as bools, so they specialise the kernels as before)."""
        names = [f.name for f in fields(LaunchProfile)]
        if len(values) != len(names):
            raise ValueError(f"a profile has {len(names)} fields ({', '.join(names)}), got {len(values)} values")
        return LaunchProfile(**{f.name: bool(v) if f.type == "bool" else int(v)
                                for f, v in zip(fields(LaunchProfile), values)})

    @staticmethod
    def from_dict(data: dict) -> "LaunchProfile":
        return LaunchProfile(**{k: data[k] for k in LaunchProfile.__dataclass_fields__ if k in data})

    @property
    def kernel(self) -> str:
        """Which kernel runs the profile: "wgmma", "exchange", "keysrows" (the Gluon kernels) or "triton"."""
        return "wgmma" if self.warpgroup_mma else "exchange" if self.shared_exchange else \
            "keysrows" if self.keys_as_rows else "triton"

    def short(self) -> str:
        form = "kvmajor" if self.kv_major else "rowmajor"
        ahead = "/ahead" if self.addresses_ahead else ""
        kernel = "" if self.kernel == "triton" else f"/{self.kernel}"
        return (f"m{self.block_m}/n{self.tile_n}/s{self.num_splits}/w{self.num_warps}/st{self.num_stages}/"
                f"{form}{ahead}{kernel}")

    @staticmethod
    def from_short(text: str) -> "LaunchProfile":
        """Inverse of `short()`; the orientation may be left out (row-major), `/ahead` and one of
        `/wgmma`, `/exchange`, `/keysrows` are optional."""
        parts = text.split("/")
        kernel = parts[-1] if parts[-1] in ("wgmma", "exchange", "keysrows") and len(parts) > 5 else ""
        parts = parts[:len(parts) - bool(kernel)]
        by_key = dict(zip(("m", "n", "s", "w", "st"), parts[:5]))
        try:
            values = [int(by_key[k][len(k):]) for k in ("m", "n", "s", "w", "st") if by_key[k].startswith(k)]
        except (KeyError, ValueError):
            values = []
        ahead = parts[-1] == "ahead" and len(parts) > 5
        flags = parts[5:len(parts) - ahead]
        if len(values) != 5 or flags not in ([], ["rowmajor"], ["kvmajor"]):
            raise ValueError(f"not a profile like m64/n32/s12/w4/st3[/rowmajor|/kvmajor][/ahead]"
                             f"[/wgmma|/exchange|/keysrows]: {text!r}")
        return LaunchProfile(*values, kv_major=flags == ["kvmajor"], addresses_ahead=ahead,
                             warpgroup_mma=kernel == "wgmma", shared_exchange=kernel == "exchange",
                             keys_as_rows=kernel == "keysrows")


VERIFY_MAX_QUERIES = 8  # the most queries a sequence of a verify call has; longer ones are prefill chunks
# The query class of a prefill call's second launch, over its sequences of at most VERIFY_MAX_QUERIES queries
# (`select.short_part_key`): keyed like a verify call of that many queries, but in a serving step those sequences
# are mostly decode tokens, so its tuned entries and rules are its own (a verify call near such an entry is not
# near it); rules written for verify calls apply to it where no rule of its own comes first (`rules.When`).
SHORT_CLASS = "short"


def query_class(max_seqlen_q: int) -> str:
    """decode: one token; verify: 2..8 draft tokens; prefill: longer chunks."""
    if max_seqlen_q <= 1:
        return "decode"
    return "verify" if max_seqlen_q <= VERIFY_MAX_QUERIES else "prefill"


@dataclass(frozen=True)
class ShapeKey:
    """Host-known shape of a call, as the dispatcher sees it.

    programs  sparse: rows x KV heads (the seed rules' "programs"); unified: sequences x KV heads,
              a lower bound that ignores how many query blocks a prefill chunk needs.
    kv_len    unified: max_seqlen_k (or the block table's capacity); sparse: top-k.
    score_mods  unified: a sliding window, softcap or sinks is given. Not a table coordinate (the
              tuned profile of a bucket serves calls with and without them); it only rules out
              profiles whose kernel has none of them (`warpgroup_mma`).
    aligned_cache  both caches start 16 bytes aligned and their block, slot and head strides are
              multiples of 16 values (`api.copy_aligned`), as a contiguous cache's are. Not a table
              coordinate either; without it the Gluon kernels (`warpgroup_mma`, `shared_exchange`,
              `keys_as_rows`) are ruled out: their 16-byte cp.async copies need an alignment that
              Triton proves from 16-divisible strides only, and their build fails otherwise.
    """

    kernel: str
    kv_dtype: str  # "bf16", "fp16", "fp8"
    head_size: int
    group: int
    query_class: str  # `query_class` of max_seqlen_q, or SHORT_CLASS for a short launch's key
    num_seqs: int
    max_seqlen_q: int
    num_tokens: int
    num_kv_heads: int
    kv_len: int
    score_mods: bool = False
    aligned_cache: bool = True

    @property
    def programs(self) -> int:
        return self.num_tokens * self.num_kv_heads if self.kernel == "sparse" else self.num_seqs * self.num_kv_heads

    def bucket(self) -> dict:
        """The coordinates tuned tables are keyed and matched by."""
        return {
            "kernel": self.kernel,
            "kv_dtype": self.kv_dtype,
            "head_size": self.head_size,
            "group": self.group,
            "query_class": self.query_class,
            "num_seqs": self.num_seqs,
            "max_seqlen_q": self.max_seqlen_q,
            "num_tokens": self.num_tokens,
            "num_kv_heads": self.num_kv_heads,
            "kv_len": self.kv_len,
        }
