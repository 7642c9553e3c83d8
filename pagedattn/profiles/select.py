"""The one place that decides launch parameters.

Order: explicit `profile=` -> tuned table for this device (nearest bucket; where its profile
splits the KV range, the split count scaled to the call's programs, `table_profile_for_call`; a
call that the rules put on another kernel than the bucket they agree with, or that the bucket's
profile would run in more query blocks per sequence than the bucket where the rules' blocks hold
more of its queries, takes the rules' profile, `rules_across_a_boundary`) ->
the arch's rule ladders applied to the analytic default, splits recomputed for the laddered
profile -> the analytic default. The last two are `untuned_selection`: what a GPU without a tuned
table runs, the baseline the tuner and the bench's `pagedattn-default` measure. The blocklist is checked
last: a blocked candidate is skipped and the next source is tried; an explicit blocked profile is
an error. Measured candidates (table, rules) are skipped only when blocked or when they would compute
a wrong result (`shape_problem`); the resource estimates (`unfit_reason`) prune the tuner's search
space and never veto a measurement. Everything here is a pure function of (`ShapeKey`,
`DeviceInfo`), so every branch is testable on a CPU; the choice is remembered per pair until
`tables.clear_cache` (the rules and tables are data that change only between such calls).

A unified call runs in the launches of `unified_launch_plan`: one with the profile chosen above, or,
for a prefill call whose batch may also hold decode and verify sequences, two or three: the chunks
with that profile, the sequences of at most VERIFY_MAX_QUERIES queries with the profile chosen for
the short-part key (`short_part_key`, `partitioned_plan`), each launch's programs of the other
launches' sequences exiting at once. Where that profile's blocks would run a sequence of
VERIFY_MAX_QUERIES queries in more than SHORT_BLOCKS_PER_SEQUENCE blocks (16 rows at a group of 8: 2
queries per block), the short sequences with more queries than that many blocks hold run in a third
launch on the blocks the rules give a verify call of VERIFY_MAX_QUERIES queries (`short_launches`),
where one block reads a sequence's keys once. A call whose token count leaves no room for a sequence
of at most VERIFY_MAX_QUERIES queries runs in one launch. Without a tuned entry for the short part,
its launches cut each sequence's keys into segments of at most SHORT_SEGMENT_KEYS (or the wave
rule's finer split): the short sequences' lengths differ, and unsplit, the longest ones' programs
end the launch.

Analytic default:
  * BLOCK_M (unified): decode/verify pack all query tokens of a sequence with the group's heads,
    next_pow2(group x max_seqlen_q) capped at 128 (>= next_pow2(group), >= 16); prefill uses 128
    rows at head size <= 128 and 64 above (fp32 accumulator registers).
    BLOCK_M (sparse): next_pow2(group), >= 16.
  * TILE_N: 64 at head size <= 128 or for FP8 K/V, else 32 (shared memory for K and V stages).
  * num_splits: FlashAttention-style — the smallest split count whose wave efficiency over the
    device's program slots is within 85 % of the best, never leaving fewer than 4 tiles per split;
    when that count's programs fit one wave, the most splits that still fit it; and never a count
    that leaves a segment without tiles (`with_splits`, `choose_splits`; program slots depend on
    warps, tile and stages, so it runs after the ladders; registers per thread from
    `thread_registers`, fitted to the kernels' sm90 builds).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..device import DeviceInfo
from . import rules, tables
from .types import (
    EXCHANGE_BLOCK_M, EXCHANGE_MIN_STAGES, EXCHANGE_WARPS, KEYS_ROWS_BLOCK_M, KEYS_ROWS_TILE, KEYS_ROWS_WARPS,
    UNIFIED_KEYS_ROWS_FORMS, UNIFIED_KEYS_ROWS_MAX_M, WGMMA_BLOCK_M, WGMMA_MIN_STAGES, WGMMA_WARPS, LaunchProfile,
    SHORT_CLASS, VERIFY_MAX_QUERIES, ShapeKey, cdiv, next_pow2,
)

KV_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1}
ALL_QUERIES = 2**31 - 1  # a launch's query-length bound that takes every sequence
MIN_TILES_PER_SPLIT = 4
# the default's cap: each split adds an fp32 partial row per query row and head to write and merge.
# The wave rule needs more than 64 only below ~4 programs (single long requests with few KV heads),
# where the H200 measured 256 splits 2.5x faster than 55 (FP8, one KV head; perf-notes v7)
MAX_SPLITS = {"unified": 256, "sparse": 16}
# the untuned short launch's longest KV segment (`segmented_short`): the H200's tuner sweeps of the mixed
# batch's short launch (31,104 keys at most) were best at 1,984-3,904 keys per segment for BF16 pages (16 and 8
# segments of 64-key tiles) and 3,968-5,248 for FP8 (8 and 6 of 128 keys), within 2 % at the 8 segments that
# 4,096 gives (perf-notes v33 item 1, v34 item 3)
SHORT_SEGMENT_KEYS = 4096
# the most query blocks a mixed batch's short launch runs a sequence in (`short_launches`); each reads the
# sequence's keys. On the H200 (perf-notes v36 item 1; whole mixed calls against one short launch): a second
# short launch cost 0.2-0.7 % where it had no sequences; at a group of 4, where 16-row blocks hold 8 queries in
# 2, it took 0.95-1.02x on calls with 8-query verifies; at a group of 8 (8 queries in 4 blocks) 0.84-0.85x
# beside 24 of them and 0.95-0.96x beside decodes too, and 4-query verifies ran 1.03x slower in one 64-row
# block than in two 16-row ones
SHORT_BLOCKS_PER_SEQUENCE = 2
TRITON_REGISTERS_BASE = {"unified": 72, "sparse": 16}  # `thread_registers`' constant, fitted per Triton kernel
REGISTERS_PER_SM = 65536  # an NVIDIA SM's (sm80 and later), allocated per warp in steps of 8 per thread
MAX_PROGRAMS_PER_SM = 4  # the most resident programs `program_slots` (and so the split rules) count per SM
MAX_ACC_REGISTERS = 192  # accumulator + score registers per thread past which Triton spills in the loop (sm90 SASS: 144 did not)


@dataclass(frozen=True)
class Selection:
    profile: LaunchProfile
    source: str  # "explicit", "table", "rules", "default"
    detail: str = ""


def kv_buffers(num_stages: int, addresses_ahead: bool = False) -> int:
    """K/V tile buffers Triton 3.6 allocates for a loop whose K/V addresses come from a page-table
    load in the same loop: num_stages - 1, at most 3 at TILE_N <= 64 (sm90 compiles, see
    docs/perf-notes.md v4; e.g. D256 BLOCK_M 64 TILE_N 64: stages 3 and 4 -> 2 buffers, 5 and 6 -> 3).
    At TILE_N 128 the count keeps growing (stages 5 -> 4 buffers, over the limit at head size 128 and
    256); this estimate prunes only what cannot fit, so such a candidate fails to compile and the
    tuner records the error. With the addresses read a step ahead the table load no longer takes a
    stage: num_stages buffers (D256 BLOCK_M 64 TILE_N 32: stages 3 -> 3, 4 -> 4; perf-notes v6)."""
    if addresses_ahead:
        return num_stages
    return min(max(num_stages - 1, 1), 3)


def smem_bytes(profile: LaunchProfile, key: ShapeKey) -> int:
    """Shared memory estimate: KV stage buffers, the fp16 tiles an FP8 tile is upcast into for the
    row-major form (one up to 64-token tiles, two at 128: Triton 3.6's sm90 allocation), and Q.
    Against Triton's builds of the unified kernel (scripts/compile_report.py, perf-notes v8): within
    1 KB below the real size at BLOCK_M 64-128 for BF16 and FP8, tiles 16-128, 2-5 stages, with and
    without addresses ahead; at BLOCK_M 16 it overestimates (75 vs 136 KB for BF16 at n64/st3),
    which only makes the split rule more conservative there. The warpgroup-MMA kernel allocates
    exactly Q (16-bit, or two e4m3 tiles for FP8 pages: the same bytes), its K/V ring, a byte per
    ring key (usable or masked) and, for FP8 pages, the three fp16 tiles V is converted into: 96 KB
    + 64 B at D=256, 16 keys, 4 stages, BF16, 88 KB + 64 B for FP8 (tests/test_compile.py checks it
    against the builds). So does the sparse shared-exchange kernel: its K/V ring, P (16-bit), the two
    warps' row maxima, each thread's copy of its warp's vote, an fp32 mask per ring key and, for
    16-bit pages, Q (FP8 pages keep Q in registers and convert in registers): 75,392 B at D=256, 32
    keys, 2 stages, BF16; 34,432 B for FP8. For the keys-as-rows kernel an upper bound within ~5 KB:
    q's e4m3 terms (three counted: fp16 q takes three, bf16 q two, and the key does not say which),
    its K/V ring, an fp32 mask per ring key, P^T (fp16, 64 keys x the group's heads rounded up to 8
    or 16), the votes (one fp32 per thread) and 1 KB for the buffers' alignment (77,056 B built
    against 81,920 at D=256, 12 heads, 2 stages, bf16 q). The unified keys-as-rows kernel allocates
    exactly q's two e4m3 tiles, its K/V ring, a byte per ring key, P^T (fp16, tile_n keys x
    block_m), the votes (one fp32 per thread) and the column reductions' scratch across the warps
    (fp32, warps x block_m): 183,552 B at 64 packed rows, 128 keys, 2 stages; 76,672 B at 16 rows,
    64 keys, 2 stages (three programs per SM)."""
    head_pad = next_pow2(key.head_size)
    if profile.keys_as_rows and key.kernel == "unified":
        return unified_keys_rows_smem(profile, head_pad)
    if profile.keys_as_rows:
        heads = max(8, next_pow2(key.group))
        ring = profile.num_stages * KEYS_ROWS_TILE
        return 3 * heads * head_pad + 2 * ring * head_pad + 4 * ring + KEYS_ROWS_TILE * heads * 2 + \
            4 * 32 * KEYS_ROWS_WARPS + 1024
    if profile.shared_exchange:
        ring = profile.num_stages * profile.tile_n
        q_tile = 0 if key.kv_dtype == "fp8" else EXCHANGE_BLOCK_M * 2 * head_pad
        maxima_and_votes = (EXCHANGE_BLOCK_M + 32) * EXCHANGE_WARPS * 4
        return 2 * ring * KV_BYTES[key.kv_dtype] * head_pad + q_tile + EXCHANGE_BLOCK_M * profile.tile_n * 2 + \
            maxima_and_votes + 4 * ring
    if profile.warpgroup_mma:
        ring = profile.num_stages * profile.tile_n
        converted = 3 * profile.tile_n if key.kv_dtype == "fp8" else 0
        return ((profile.block_m + converted) * 2 + 2 * ring * KV_BYTES[key.kv_dtype]) * head_pad + ring
    kv = kv_buffers(profile.num_stages, profile.addresses_ahead) * profile.tile_n * head_pad * KV_BYTES[key.kv_dtype] * 2
    upcast_tiles = (2 if profile.tile_n >= 128 else 1) if key.kv_dtype == "fp8" and not profile.kv_major else 0
    upcast = upcast_tiles * profile.tile_n * head_pad * 2
    return kv + upcast + profile.block_m * head_pad * 2


def acc_registers(profile: LaunchProfile, key: ShapeKey) -> int:
    """fp32 accumulator + score registers per thread."""
    threads = 32 * profile.num_warps
    return (profile.block_m * next_pow2(key.head_size) + profile.block_m * profile.tile_n) // threads


def shape_problem(profile: LaunchProfile, key: ShapeKey) -> str | None:
    """Why `profile` would compute a wrong result for `key` (None if it would not)."""
    if profile.block_m < key.group:
        return f"block_m={profile.block_m} is smaller than the GQA group ({key.group})"
    if not key.aligned_cache and (profile.keys_as_rows or profile.warpgroup_mma or profile.shared_exchange):
        return ("the Gluon kernels copy K/V in 16-byte pieces: they need caches whose block, slot and head strides "
                "are multiples of 16 values and whose data starts 16-byte aligned")
    if profile.keys_as_rows:
        return keys_rows_problem(profile, key) if key.kernel == "sparse" else unified_keys_rows_problem(profile, key)
    if profile.warpgroup_mma:
        return wgmma_problem(profile, key)
    return exchange_problem(profile, key) if profile.shared_exchange else None


def wgmma_problem(profile: LaunchProfile, key: ShapeKey) -> str | None:
    """Why the warpgroup-MMA kernel (ops/verify_wgmma.py) cannot run `key` with `profile`."""
    if key.kernel != "unified":
        return "warpgroup_mma is a unified-kernel profile"
    if (profile.block_m, profile.num_warps) != (WGMMA_BLOCK_M, WGMMA_WARPS):
        return f"warpgroup_mma runs block_m={WGMMA_BLOCK_M} with {WGMMA_WARPS} warps (one warpgroup)"
    if profile.kv_major:
        return "warpgroup_mma has no kv_major form"
    if profile.num_stages < WGMMA_MIN_STAGES or profile.tile_n > 64:
        return f"warpgroup_mma needs num_stages >= {WGMMA_MIN_STAGES} (its K/V ring) and tile_n <= 64"
    if key.head_size not in (64, 128, 256):
        return f"warpgroup_mma supports head sizes 64, 128 and 256, not {key.head_size}"
    copies = 32 * WGMMA_WARPS * 16
    if profile.tile_n * key.head_size * KV_BYTES[key.kv_dtype] < copies:
        return (f"warpgroup_mma copies 16 bytes per thread: a K tile (tile_n x head_size {key.kv_dtype}) "
                f"must hold at least {copies} bytes")
    if key.score_mods:
        return "warpgroup_mma has no sliding window, softcap or sinks"
    return None


def exchange_problem(profile: LaunchProfile, key: ShapeKey) -> str | None:
    """Why the sparse shared-exchange kernel (ops/sparse_exchange.py) cannot run `key` with `profile`."""
    if key.kernel != "sparse":
        return "shared_exchange is a sparse-kernel profile"
    if (profile.block_m, profile.num_warps) != (EXCHANGE_BLOCK_M, EXCHANGE_WARPS):
        return f"shared_exchange runs block_m={EXCHANGE_BLOCK_M} with {EXCHANGE_WARPS} warps"
    if profile.kv_major or profile.addresses_ahead or profile.warpgroup_mma or profile.keys_as_rows:
        return "shared_exchange has no kv_major, addresses_ahead, warpgroup_mma or keys_as_rows form"
    if profile.num_stages < EXCHANGE_MIN_STAGES or profile.tile_n > 64:
        return f"shared_exchange needs num_stages >= {EXCHANGE_MIN_STAGES} (its K/V ring) and tile_n <= 64"
    if key.head_size not in (64, 128, 256):
        return f"shared_exchange supports head sizes 64, 128 and 256, not {key.head_size}"
    return None


def _keys_rows_form_problem(profile: LaunchProfile, key: ShapeKey) -> str | None:
    """What both keys-as-rows kernels (sparse and unified) refuse alike: another kernel's flag, a ring
    of fewer than 2 stages, pages other than FP8."""
    if profile.kv_major or profile.addresses_ahead or profile.warpgroup_mma or profile.shared_exchange:
        return "keys_as_rows has no kv_major, addresses_ahead, warpgroup_mma or shared_exchange form"
    if profile.num_stages < EXCHANGE_MIN_STAGES:
        return f"keys_as_rows needs num_stages >= {EXCHANGE_MIN_STAGES} (its K/V ring)"
    if key.kv_dtype != "fp8":
        return "keys_as_rows runs FP8 pages only (its scores are FP8 products)"
    return None


def keys_rows_problem(profile: LaunchProfile, key: ShapeKey) -> str | None:
    """Why the sparse keys-as-rows kernel (ops/sparse_keys_rows.py) cannot run `key` with `profile`."""
    if (profile.block_m, profile.tile_n, profile.num_warps) != (KEYS_ROWS_BLOCK_M, KEYS_ROWS_TILE, KEYS_ROWS_WARPS):
        return (f"keys_as_rows runs block_m={KEYS_ROWS_BLOCK_M}, tile_n={KEYS_ROWS_TILE} with {KEYS_ROWS_WARPS} warps "
                f"(one warpgroup)")
    problem = _keys_rows_form_problem(profile, key)
    if problem:
        return problem
    if key.head_size not in (128, 256):
        return f"keys_as_rows supports head sizes 128 and 256 (O^T's halves are wgmma rows), not {key.head_size}"
    return None


def unified_keys_rows_problem(profile: LaunchProfile, key: ShapeKey) -> str | None:
    """Why the unified keys-as-rows kernel (ops/unified_keys_rows.py) cannot run `key` with `profile`."""
    if UNIFIED_KEYS_ROWS_FORMS.get(profile.tile_n) != profile.num_warps or \
            profile.block_m > UNIFIED_KEYS_ROWS_MAX_M[profile.tile_n]:
        return ("keys_as_rows (unified) runs tile_n=128 with 8 warps (two warpgroups) and block_m 16 to 64, "
                "or tile_n=64 with 4 warps (one warpgroup) and block_m 16 to 32 (wgmma's N)")
    problem = _keys_rows_form_problem(profile, key)
    if problem:
        return problem
    if key.head_size != 256:
        return (f"keys_as_rows (unified) supports head size 256 (O^T's even and odd halves of 128 rows), "
                f"not {key.head_size}")
    if key.score_mods:
        return "keys_as_rows has no sliding window, softcap or sinks"
    return None


def device_problem(profile: LaunchProfile, device: DeviceInfo) -> str | None:
    """Why `profile`'s kernel cannot run on `device` (None if it can)."""
    for gluon, name in ((profile.warpgroup_mma, "warpgroup_mma"), (profile.shared_exchange, "shared_exchange"),
                        (profile.keys_as_rows, "keys_as_rows")):
        if gluon and device.arch != "sm90":
            if device.vendor == "interpreter":
                return f"{name} is a Gluon kernel, which the Triton interpreter does not run"
            return f"{name} needs an sm90 (Hopper) GPU, this is {device.arch}"
    return None


def unfit_reason(profile: LaunchProfile, key: ShapeKey, device: DeviceInfo) -> str | None:
    """Why `profile` cannot run `key` on `device`: wrong shape, wrong device or over the resource
    estimates."""
    problem = shape_problem(profile, key) or device_problem(profile, device)
    if problem or device.vendor == "interpreter":
        return problem
    if smem_bytes(profile, key) > device.smem_per_block:
        return f"needs ~{smem_bytes(profile, key)} B of shared memory, device has {device.smem_per_block}"
    if acc_registers(profile, key) > MAX_ACC_REGISTERS:
        return f"~{acc_registers(profile, key)} accumulator registers per thread (> {MAX_ACC_REGISTERS})"
    return None


def unified_keys_rows_smem(profile: LaunchProfile, head_pad: int) -> int:
    """`smem_bytes` of the unified keys-as-rows kernel, which allocates exactly this (`smem_bytes` says what)."""
    ring = profile.num_stages * profile.tile_n
    return 2 * profile.block_m * head_pad + 2 * ring * head_pad + ring + profile.tile_n * profile.block_m * 2 + \
        4 * profile.num_warps * (32 + profile.block_m)


def keys_rows_register_cap(profile: LaunchProfile, head_size: int, device: DeviceInfo) -> int | None:
    """The register cap per thread (ptxas' maxnreg) of the unified keys-as-rows kernel's build of `profile`:
    the most registers at which as many programs share an SM as its shared memory lets (at most
    MAX_PROGRAMS_PER_SM, as `program_slots` counts them), where that is under ptxas' own 255; None
    elsewhere. The 16-row one-warpgroup form (76,672 B at 2 stages: three programs) built at 174
    registers once a tile's slots and page indices no longer depended on its index (two programs'
    worth) and built at 168 with this cap, without a spill (perf-notes v37 item 1); since q's two
    terms share one product at 16 rows it builds at 150, under the cap, which holds the three
    programs should a change grow it again (perf-notes v51 item 1); the other forms' caps are 255 or
    more."""
    by_smem = device.smem_per_block // unified_keys_rows_smem(profile, next_pow2(head_size))
    programs = max(1, min(by_smem, MAX_PROGRAMS_PER_SM))
    cap = REGISTERS_PER_SM // (32 * profile.num_warps * programs) // 8 * 8
    return cap if cap < 255 else None


def thread_registers(profile: LaunchProfile, key: ShapeKey) -> int:
    """Registers a thread of `profile`'s kernel holds, estimated (ptxas caps a thread at 255 and
    spills the rest). The Gluon kernels: the fp32 accumulator and scores + 64. The Triton kernels
    (ops/unified.py, ops/sparse.py) also hold their share of the K/V tile (tile_n x head elements
    over the threads, 3 registers per 4: the loaded values, their conversions and addresses) and
    their warp's Q rows as the dot's operand (16 or more rows x head, 2 bytes each, over a warp),
    + a constant per kernel. Fitted to sm90 builds of 424 profile forms of both kernels
    (results/v23/triton-registers.jsonl, perf-notes v23 item 1): the programs per SM the
    registers allow are right on 388, one too many on 12, too few on 24; the estimate without the
    Triton terms put one or more too many on 236 (e.g. 255 registers built for 16 rows and 128-key
    tiles at head size 128, 96 estimated: 43 splits for the single long request where 29 fill one
    wave, 1.23x the time)."""
    regs = acc_registers(profile, key)
    if profile.kernel != "triton":
        return min(255, regs + 64)
    head = next_pow2(key.head_size)
    q_rows = max(16, profile.block_m // profile.num_warps)
    regs += 3 * profile.tile_n * head // (4 * 32 * profile.num_warps) + q_rows * head // 64
    return min(255, regs + TRITON_REGISTERS_BASE[key.kernel])


def programs_by_registers(registers: int, num_warps: int) -> int:
    """Programs of `num_warps` warps at `registers` per thread that an SM's register file holds
    (registers are allocated per warp in steps of 8 per thread, REGISTERS_PER_SM per SM)."""
    return REGISTERS_PER_SM // (32 * num_warps * cdiv(registers, 8) * 8)


def program_slots(profile: LaunchProfile, key: ShapeKey, device: DeviceInfo) -> int:
    """Programs the device runs at once: SMs x resident programs (shared memory / registers bound)."""
    by_smem = device.smem_per_block // max(1, smem_bytes(profile, key))
    by_regs = programs_by_registers(thread_registers(profile, key), profile.num_warps)
    return device.num_sms * max(1, min(by_smem, by_regs, MAX_PROGRAMS_PER_SM))


WAVE_SLACK = 0.85  # a split count within this fraction of the best wave efficiency is as good


def wave_efficiency(programs: int, slots: int) -> float:
    """Busy fraction of the program slots over the waves `programs` take."""
    return programs / (cdiv(programs, slots) * slots)


def even_splits(tiles: int, splits: int) -> int:
    """The splits that get tiles when `tiles` are cut into `splits` segments: every kernel gives a
    segment cdiv(tiles, splits) tiles, so the rest start past the keys and exit (16 tiles in 14
    splits: 8 segments of 2 tiles and 6 empty ones, the time of 8 splits)."""
    return cdiv(tiles, cdiv(tiles, splits)) if tiles > 0 else 1


def choose_splits(programs: int, tiles: int, slots: int, max_splits: int) -> int:
    """FlashAttention's rule: the smallest split count within WAVE_SLACK of the best wave efficiency.
    When its programs fit in one wave, the wave takes the most splits that still fit (the programs
    then run side by side, so fewer tiles each is less time: the H200 table's five one-wave split
    counts are these, perf-notes v24 item 3). Either way the count leaves no segment empty
    (`even_splits`)."""
    if programs >= 0.8 * slots:
        return 1
    limit = max(1, min(max_splits, tiles // MIN_TILES_PER_SPLIT))
    best = max(wave_efficiency(programs * s, slots) for s in range(1, limit + 1))
    splits = next(s for s in range(1, limit + 1) if wave_efficiency(programs * s, slots) >= WAVE_SLACK * best)
    if programs * splits <= slots:
        splits = max(splits, min(limit, slots // programs))
    return even_splits(tiles, splits)


def unified_query_blocks(key: ShapeKey, profile: LaunchProfile) -> int:
    """Query blocks with work (sequences assumed of equal length max_seqlen_q, capped by tokens)."""
    block_q = profile.block_q(key.group)
    per_seq = profile.query_blocks(key.group, key.max_seqlen_q)
    return min(key.num_seqs * per_seq, cdiv(key.num_tokens, block_q) + key.num_seqs)


def work_units(profile: LaunchProfile, key: ShapeKey) -> int:
    """Programs of one split: rows x KV heads (sparse), query blocks x KV heads (unified)."""
    if key.kernel == "sparse":
        return key.num_tokens * key.num_kv_heads
    return unified_query_blocks(key, profile) * key.num_kv_heads


def with_splits(profile: LaunchProfile, key: ShapeKey, device: DeviceInfo,
                splits_range: tuple[int, int] | None = None) -> LaunchProfile:
    """`profile` with the wave rule's split count for its own program slots, clamped into splits_range."""
    splits = choose_splits(work_units(profile, key), cdiv(key.kv_len, profile.tile_n),
                           program_slots(profile, key, device), MAX_SPLITS[key.kernel])
    if splits_range is not None:
        splits = min(max(splits, splits_range[0]), splits_range[1])
    return LaunchProfile.from_dict(profile.to_dict() | {"num_splits": splits})


def default_profile(key: ShapeKey, device: DeviceInfo) -> LaunchProfile:
    head_pad = next_pow2(key.head_size)
    heads_block = max(16, next_pow2(key.group))
    tile_n = 64 if head_pad <= 128 or key.kv_dtype == "fp8" else 32
    if key.kernel == "sparse":
        block_m = heads_block
    elif key.query_class == "prefill":
        block_m = max(heads_block, 128 if head_pad <= 128 else 64)
    else:
        block_m = max(heads_block, min(128, next_pow2(key.group * key.max_seqlen_q)))
    num_warps = 8 if block_m * head_pad >= 128 * 128 else 4
    base = LaunchProfile(block_m=block_m, tile_n=tile_n, num_splits=1, num_warps=num_warps, num_stages=3)
    return with_splits(base, key, device)


def select_profile(key: ShapeKey, device: DeviceInfo, explicit: LaunchProfile | None = None) -> Selection:
    """`explicit` if it can run the call (else ValueError), otherwise the tuned table's, the rules' or
    the default profile. The choice is remembered per call shape and device until
    `tables.clear_cache`: a call near a tuned bucket evaluates the rules once or twice (85-130 us on
    the H200's host, perf-notes v22), every attention layer of a model step asks for the same shape,
    and a remembered choice takes a dictionary lookup."""
    if explicit is not None:
        problem = _run_problem(key.kernel, device, key, explicit)
        if problem:
            raise ValueError(f"profile {explicit.short()} cannot run this {key.kernel} call: {problem}")
        return Selection(explicit, "explicit")
    return _tuned_or_untuned(key, device)


@dataclass(frozen=True)
class PlannedLaunch:
    """One launch of a unified call: its selection, run over the sequences with more than
    `queries_above` and at most `queries_upto` queries (the kernel's programs of other sequences exit)."""
    selection: Selection
    queries_above: int = 0
    queries_upto: int = ALL_QUERIES


def unified_launch_plan(key: ShapeKey, device: DeviceInfo, explicit: LaunchProfile | None = None
                        ) -> tuple[PlannedLaunch, ...]:
    """The launches of a unified call: one, with `select_profile`'s choice; or, for a batch that may
    mix prefill chunks with decode and verify sequences, two (`partitioned_plan`). An explicit
    profile runs the whole call in one launch."""
    chosen = select_profile(key, device, explicit)
    if explicit is not None:
        return (PlannedLaunch(chosen),)
    return partitioned_plan(key, device, chosen)


def short_part_key(key: ShapeKey) -> ShapeKey | None:
    """The shape key of a call's second launch (`partitioned_plan`): a unified call of the prefill
    class with several sequences, seen as a verify call of VERIFY_MAX_QUERIES queries over the same
    sequences, keys and heads, in a query class of its own (SHORT_CLASS: its sequences are mostly
    decode tokens, and its tuned entries must not serve verify calls); None for a call that is not
    partitioned: also where the call's tokens prove that no sequence has VERIFY_MAX_QUERIES queries
    or fewer (with one, the tokens are at most the other sequences' max_seqlen_q each plus
    VERIFY_MAX_QUERIES; a dense prefill batch of equal chunks has more). The tuner tunes that launch
    alone under this key (`pagedattn tune` on a mixed batch)."""
    if key.kernel != "unified" or key.query_class != "prefill" or key.num_seqs < 2 or \
            key.num_tokens > (key.num_seqs - 1) * key.max_seqlen_q + VERIFY_MAX_QUERIES:
        return None
    return ShapeKey(**(key.bucket() | {
        "query_class": SHORT_CLASS, "max_seqlen_q": VERIFY_MAX_QUERIES,
        "num_tokens": min(key.num_tokens, key.num_seqs * VERIFY_MAX_QUERIES),
        "score_mods": key.score_mods, "aligned_cache": key.aligned_cache}))


@tables.remembered_until_clear_cache
def partitioned_plan(key: ShapeKey, device: DeviceInfo, chosen: Selection) -> tuple[PlannedLaunch, ...]:
    """A prefill call's batch may hold decode and verify sequences beside its chunks (a serving
    engine's step with chunked prefill), and one launch packs their one to eight queries into the
    chunks' wide blocks: at BLOCK_M 128 and a group of 4, a decode program's matrix products are
    1/32 useful, and on the mixed batch those products cost more than the chunks' own. So where
    `short_part_key` gives a key and `chosen` (the call's profile) runs the Triton kernel, the
    sequences of at most VERIFY_MAX_QUERIES queries run in launches of their own (`short_launches`),
    with the profile the layer picks for that key (`segmented_short` where the table has no entry
    for it), if it also runs the Triton kernel (the Gluon kernels take no query-length range) on
    narrower blocks than `chosen`'s. The chunks' launch runs first: if it splits, its merge writes
    every row of `out`, the short sequences' as zeros.
    The host cannot see how many sequences are short (only, from the tokens, where none can be:
    `short_part_key`): with none, a short launch's programs (`ops.unified`'s per-sequence grid) all
    exit: 1.2-1.7 us on the H200 (perf-notes v32 item 6), and a split one's merge programs too (3.3
    us in all, v33 item 1; 9-16 us for a split launch of 8 rows per sequence beside 68 sequences at a
    group of 4, v36 item 1)."""
    short_key = short_part_key(key)
    return partition(key, chosen, None if short_key is None else
                     short_launches(short_key, short_selection(short_key, device), device))


def short_selection(short_key: ShapeKey, device: DeviceInfo) -> Selection:
    """The short launch's selection as the dispatcher makes it (`partitioned_plan`; the tuner times a
    mixed call's candidates with it): the layer's choice for the short-part key, cut into segments
    where it is not a tuned table's (`segmented_short`)."""
    return segmented_short(select_profile(short_key, device), short_key)


@tables.remembered_until_clear_cache
def short_launches(short_key: ShapeKey, short: Selection, device: DeviceInfo) -> tuple[PlannedLaunch, ...]:
    """The launches of a mixed batch's short sequences, given the short launch's selection `short`.
    One, over every sequence of at most VERIFY_MAX_QUERIES queries, where `short`'s blocks hold them
    in at most SHORT_BLOCKS_PER_SEQUENCE blocks each. Where they need more (the sm90 short rows'
    16-row blocks at a group of 8 hold 2 queries: decode-heavy launches take 0.54-0.74x the time of
    wider blocks there, perf-notes v35 item 2), a sequence of 8 queries runs in 4 blocks, each
    reading its keys again: 24 verifies of 8 took 1.63-1.66x the best form's time. So the sequences
    with more queries than SHORT_BLOCKS_PER_SEQUENCE of its blocks hold run in a second launch with
    the rules' selection for a verify call of VERIFY_MAX_QUERIES queries over the same sequences
    (`short_verify_key`; the verify rows' blocks, the best form on those launches), cut into
    segments as an untuned short launch is, where it runs the Triton kernel on blocks that hold more
    queries than `short`'s (v36 item 1). The tuner times a short launch's candidates with it, on every
    call of its timing loop, so the answer is remembered."""
    group = short_key.group
    upto = min(VERIFY_MAX_QUERIES, SHORT_BLOCKS_PER_SEQUENCE * short.profile.block_q(group))
    if short.profile.kernel == "triton" and upto < VERIFY_MAX_QUERIES:
        verify_key = short_verify_key(short_key)
        longer = segmented_short(untuned_selection(verify_key, device), verify_key)
        if longer.profile.kernel == "triton" and longer.profile.block_q(group) > short.profile.block_q(group):
            return (PlannedLaunch(short, queries_upto=upto),
                    PlannedLaunch(longer, queries_above=upto, queries_upto=VERIFY_MAX_QUERIES))
    return (PlannedLaunch(short, queries_upto=VERIFY_MAX_QUERIES),)


def short_verify_key(short_key: ShapeKey) -> ShapeKey:
    """The short-part key seen as a verify call (`short_launches`' second launch: its sequences are
    verifies of more queries than the short launch's blocks hold)."""
    return ShapeKey(**(short_key.bucket() | {"query_class": "verify"}), score_mods=short_key.score_mods,
                    aligned_cache=short_key.aligned_cache)


def untuned_launch_plan(key: ShapeKey, device: DeviceInfo) -> tuple[PlannedLaunch, ...]:
    """The launches of a unified call on a device without a tuned table: `partition` of the untuned
    choices for the call and for its short part (what the bench's no-table column runs)."""
    short_key = short_part_key(key)
    return partition(key, untuned_selection(key, device), None if short_key is None else short_launches(
        short_key, segmented_short(untuned_selection(short_key, device), short_key), device))


def segmented_short(short: Selection, short_key: ShapeKey) -> Selection:
    """The short launch's selection with its KV range cut into segments of at most SHORT_SEGMENT_KEYS
    keys where it is not a tuned table's (whose split was measured on a batch with short sequences)
    and the wave rule's split is coarser. The wave rule counts every sequence as short and, with
    many, runs them in one pass, so the longest sequences' programs end the launch: on the H200 the
    mixed batch's short launch (BF16 pages) took 1.88 ms on the untuned profile in one pass and 1.01 ms
    on the tuned one at 8 segments (perf-notes v33-v34)."""
    tiles = cdiv(short_key.kv_len, short.profile.tile_n)
    segments = even_splits(tiles, min(MAX_SPLITS[short_key.kernel], cdiv(short_key.kv_len, SHORT_SEGMENT_KEYS)))
    if short.source == "table" or short.profile.num_splits >= segments:
        return short
    segmented = LaunchProfile.from_dict(short.profile.to_dict() | {"num_splits": segments})
    why = f"{segments} segments of at most {SHORT_SEGMENT_KEYS} keys (short launch)"
    return Selection(segmented, short.source, f"{short.detail}; {why}" if short.detail else why)


def partition(key: ShapeKey, chosen: Selection, short: tuple[PlannedLaunch, ...] | None) -> tuple[PlannedLaunch, ...]:
    """`partitioned_plan`'s rule, given the short sequences' launches (`short_launches`; None: the call
    has no short part)."""
    whole = (PlannedLaunch(chosen),)
    if short is None or chosen.profile.kernel != "triton" or short[0].selection.profile.kernel != "triton" or \
            short[0].selection.profile.block_q(key.group) >= chosen.profile.block_q(key.group):
        return whole
    return (PlannedLaunch(chosen, queries_above=VERIFY_MAX_QUERIES),) + short


@tables.remembered_until_clear_cache
def _tuned_or_untuned(key: ShapeKey, device: DeviceInfo) -> Selection:
    kernel = key.kernel
    found = tables.lookup(key, device.name)
    if found is not None:
        tuned, entry = found
        bucket = ShapeKey(**entry["key"])
        across = rules_across_a_boundary(tuned, bucket, key, device)
        if across is not None:
            return across
        profile = table_profile_for_call(tuned, bucket, key, device)
        if _run_problem(kernel, device, key, profile) is None:
            scaled = f"; splits {tuned.num_splits} -> {profile.num_splits} for this call's programs" \
                if profile != tuned else ""
            return Selection(profile, "table", f"bucket {entry['key']}{scaled}")
    return untuned_selection(key, device)


def rules_across_a_boundary(tuned: LaunchProfile, bucket: ShapeKey, key: ShapeKey,
                            device: DeviceInfo) -> Selection | None:
    """The rules' selection for a call near a tuned bucket (not on it) that lies across one of the
    rules' boundaries from it, where the bucket's measurement says little about the call:
    * a kernel boundary: the rules give the bucket the kernel its tuned profile runs, and the call
      another; the rules' evidence is about the call's kernel (perf-notes v22 item 3: FP8 verify of
      10-20 sequences over 2,048-4,096 keys near the 8,192-key bucket, 4-10 % less time on the rules'
      wgmma kernel than on the bucket's keys-as-rows one);
    * a query-block boundary: the tuned profile would run the call's queries in more blocks per
      sequence than the bucket's, each block reading the sequence's keys again, and the rules'
      blocks hold more of them (v35 item 1: BF16 verify of 8 queries at a group of 4 near the
      4-query bucket, its 16-row blocks two per sequence, 1.34-1.47x the time of the rules' 32 rows).
    None for every other call, and on the bucket itself."""
    if bucket.bucket() == key.bucket():
        return None
    rules_here = untuned_selection(key, device)
    group, ruled = key.group, rules_here.profile
    if ruled.kernel != tuned.kernel and untuned_selection(bucket, device).profile.kernel == tuned.kernel:
        why = f"runs {tuned.kernel}, the rules give this call {ruled.kernel}"
    elif cdiv(key.max_seqlen_q, tuned.block_q(group)) > cdiv(bucket.max_seqlen_q, tuned.block_q(group)) and \
            ruled.block_q(group) > tuned.block_q(group):
        why = f"packs {tuned.block_q(group)} queries per block, the rules {ruled.block_q(group)}"
    else:
        return None
    return Selection(ruled, rules_here.source, f"{rules_here.detail}; near bucket {bucket.bucket()} {why}")


def table_profile_for_call(profile: LaunchProfile, tuned: ShapeKey, key: ShapeKey,
                           device: DeviceInfo) -> LaunchProfile:
    """A tuned bucket's profile for a call of another shape near it. Where the profile splits the KV
    range, its split count is scaled by the bucket's programs per split over the call's
    (`work_units`), so that the call runs as many programs as the tuned case did: twice the
    sequences, or a second query block per sequence (verify of 8 draft tokens on a bucket tuned at
    4), at half the splits; half the sequences at twice. Capped by the call's KV tiles and the
    kernel's split limit. Where no whole split count gets near the bucket's programs and the
    (uncapped) scaled count fills the device's program slots less well than the bucket did (below
    WAVE_SLACK of its wave efficiency: 80 KV groups at 2 splits, 160 programs for 132 slots, from a
    bucket of 120), the wave rule counts the splits for the profile instead (perf-notes v22 item 4:
    3 splits there, 14-28 % less time). A profile that does not split is kept as it is: one pass
    over the keys was the tuner's choice for that bucket (v22 item 4: 1-19 % faster than the wave
    rule's split at half the bucket's sequences)."""
    if profile.num_splits == 1 or tuned.bucket() == key.bucket():
        return profile
    units = work_units(profile, key)
    scaled = max(1, round(profile.num_splits * work_units(profile, tuned) / units))
    splits = min(scaled, MAX_SPLITS[key.kernel], cdiv(key.kv_len, profile.tile_n))
    slots = program_slots(profile, key, device)
    if splits == scaled and wave_efficiency(units * splits, slots) < \
            WAVE_SLACK * wave_efficiency(work_units(profile, tuned) * profile.num_splits, slots):
        return with_splits(profile, key, device)
    return LaunchProfile.from_dict(profile.to_dict() | {"num_splits": splits})


def untuned_selection(key: ShapeKey, device: DeviceInfo) -> Selection:
    """The choice where no tuned table matches: the arch's rule ladders over the analytic default
    (split count recomputed for the laddered profile), else the default itself."""
    kernel = key.kernel
    default = default_profile(key, device)
    laddered, sources, splits_range = rules.apply_ladders(kernel, device, key, default)
    if sources:
        laddered = with_splits(laddered, key, device, splits_range)
        if _run_problem(kernel, device, key, laddered) is None:
            return Selection(laddered, "rules", "; ".join(sources))
    if rules.blocked_reason(kernel, device, key, default) is None:
        return Selection(default, "default")
    return Selection(_unblocked_variant(kernel, device, key, default), "default", "blocklist forced other warps")


def _run_problem(kernel: str, device: DeviceInfo, key: ShapeKey, profile: LaunchProfile) -> str | None:
    """Why `profile` must not run `key` on `device`: a wrong result, the wrong device or the blocklist."""
    return (shape_problem(profile, key) or device_problem(profile, device)
            or rules.blocked_reason(kernel, device, key, profile))


def _unblocked_variant(kernel: str, device: DeviceInfo, key: ShapeKey, profile: LaunchProfile) -> LaunchProfile:
    for warps in (4, 8, 2, 16):
        variant = LaunchProfile.from_dict(profile.to_dict() | {"num_warps": warps})
        if rules.blocked_reason(kernel, device, key, variant) is None:
            return variant
    raise RuntimeError(f"every {kernel} profile variant is blocklisted on {device.arch}")
