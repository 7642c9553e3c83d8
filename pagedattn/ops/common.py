"""Triton helpers shared by the unified and sparse kernels.

* `load_scale`          — a per-tensor dequantisation scale given as a float or a device tensor
                          (read on the device, so a tensor scale never costs a host sync).
* `split_position`      — token position -> (page, slot), 32-bit (unsigned division by the
                          constant page size: a shift for powers of two).
* `page_lookup`         — logical token position -> (physical page, slot, valid) through a block
                          table row; out-of-table pages and physical ids outside [0, num_blocks)
                          come back invalid and are never dereferenced. `load_tokens` widens only
                          page x block stride to 64 bits, which took the MTP loop from ~1,040 to
                          ~780 SASS instructions per tile.
* `prepare_query`       — the compute dtype: Q's dtype, or fp16 for FP8 pages.
* `load_tokens`         — gather `[TILE_N, HEAD_PAD]` head vectors of the given tokens.
* `kernel_cache`, `compute_values` — FP8 pages reach the Triton kernels as bytes (uint8) and are
                          converted after the load: by Triton's e4m3 type where the build target
                          has it (sm89 on; sm90: one instruction per two values), by integer
                          operations where it does not (an sm80 build rejects the type).
* `attend_tile`         — one online-softmax step (base 2, lazily rescaled; on sm100 its any-row
                          test reduces a 2-D view, as Triton 3.6's sm100 build fails on a row
                          vector's reduction to a scalar) in either orientation:
                          row-major  S = Q K^T  [BLOCK_M, TILE_N], O += P V
                          kv-major   S^T = K Q^T [TILE_N, BLOCK_M], O^T += V^T P^T
                          The kv-major form makes K and V the left operand of the matrix unit,
                          which Hopper reads from registers: an FP8 tile is upcast in registers
                          and consumed there instead of being written back to shared memory.
* `write_rows`          — normalise a program's rows and store them to `out`, or, when the KV
                          range is split, store the fp32 partial and its log2-sum-exp.
* `merge_splits_kernel` — combine split partials by their log2-sum-exp into `out` (row for row,
                          or from partials laid out by sequence, `RowsBySequence`). Its launch
                          shape is fixed, not tuned (`merge_shape`). A program takes a slice of
                          head columns, at least MERGE_MIN_COLUMNS = 32 wide (one 128-byte L2 line
                          per split row), the widest that holds every split in MERGE_VALUES = 4096
                          values (12 splits at D=256: one program per (row, head), as before v7;
                          256 splits: 32 columns), and loads all its splits at once up to
                          MERGE_MAX_VALUES = 8192 values (256 splits at 32 columns), in chunks past
                          that; 64 values per thread, so 2 warps (MERGE_WARPS) up to 4096 values and
                          4 at 8192. On the H200 the BF16 MTP merge (13 splits, 256 columns) takes
                          5.2 us at 1-2 warps against 6.5 at 4 and 11 at 8 (perf-notes v18 item 3,
                          `results/v18/c4-merge-probe.*`); 256 splits at 32 columns in one round
                          trip of 4 warps take the FP8 long request at q=1 0.7 us less than in two
                          chunks of 2 warps (perf-notes v30 item 1).
                          After reading its partials a program drops their L2 lines without writing
                          them back (`discard.global.L2`, sm80 and later; a slice of whole lines):
                          otherwise a later kernel's reads evict them dirty and HBM takes the writes,
                          17 MB per BF16 MTP call at 13 splits (perf-notes v30 item 1).

Addresses one step ahead (`ADDRESSES_AHEAD`, the profile's `addresses_ahead`): a KV loop whose
K/V addresses come from a load inside the loop (page-table entries, resolved token ids) can read
that load for the next tile into registers and carry it. Left to Triton's pipeliner (3.6), the
address load is copied with cp.async as well, issued after the K/V copies of the tile before it;
copies complete in order, so waiting for the addresses waits for every K/V copy in flight
(`DEPBAR.LE SB0, 0x0` mid-loop in the sm90 SASS) and num_stages 3 or 4 keeps one tile in flight,
not two or three. Carried, the K/V copies run num_stages - 1 tiles ahead, but the table read
becomes a plain load whose L2 latency the loop waits for before issuing the copies, the
pipeline takes one more tile buffer of shared memory (fewer programs per SM) and the carried ids
cost registers (a 64-token FP8 tile at 2 warps spills). Which wins depends on the shape, so it is
a tuned launch parameter (perf-notes v6).

Scores are kept in log2 units (the softmax scale is pre-multiplied by log2(e)), so the kernels
use exp2 throughout and a partial's lse is `m + log2(l)`.
"""

import functools
from dataclasses import dataclass

import torch
import triton
import triton.language as tl
from triton.language.target_info import cuda_capability_geq, is_cuda

from ..interpreter import interpreter_active

LOG2E = tl.constexpr(1.4426950408889634)
RESCALE_SLACK = tl.constexpr(8.0)  # log2 units a row maximum may grow before acc is rescaled
NEG_BIG = tl.constexpr(-1.0e30)  # finite "minus infinity" for running maxima: keeps exp2(m_old - m_new) NaN-free
L2_LINE_VALUES = tl.constexpr(32)  # fp32 values per 128-byte L2 line
MERGE_VALUES = 4096  # partial values that decide a merge program's column slice
MERGE_MAX_VALUES = 8192  # partial values a merge program loads at once, at most
MERGE_VALUES_PER_THREAD = 64  # fp32 registers per thread of the values loaded at once
MERGE_WARPS = 2  # the fewest warps per merge program
MERGE_MIN_COLUMNS = L2_LINE_VALUES.value  # narrowest head-column slice of a merge program


@triton.jit
def load_scale(scale_ptr, scale_value, IS_TENSOR: tl.constexpr):
    if IS_TENSOR:
        return tl.load(scale_ptr).to(tl.float32)
    return scale_value


@triton.jit
def split_position(pos, PAGE: tl.constexpr):
    """(page, slot) of a non-negative token position or physical token id, both int32."""
    upos = pos.to(tl.uint32)
    return (upos // PAGE).to(tl.int32), (upos % PAGE).to(tl.int32)


@triton.jit
def page_lookup(table_row_ptr, pos, in_range, max_blocks, num_blocks, PAGE: tl.constexpr):
    page, slot = split_position(pos, PAGE)
    in_table = in_range & (pos >= 0) & (page < max_blocks)
    phys = tl.load(table_row_ptr + page, mask=in_table, other=-1)
    valid = in_table & (phys.to(tl.uint32) < num_blocks)
    return phys, slot, valid


@triton.jit
def load_tokens(cache_ptr, phys, slot, valid, stride_block, stride_slot, head_offset, offs_d,
                HEAD: tl.constexpr, HEAD_PAD: tl.constexpr):
    rows = phys.to(tl.int64) * stride_block + (slot * stride_slot + head_offset)  # [TILE_N] int64
    ptrs = cache_ptr + rows[:, None] + offs_d[None, :]
    if HEAD == HEAD_PAD:
        return tl.load(ptrs, mask=valid[:, None], other=0.0)
    return tl.load(ptrs, mask=valid[:, None] & (offs_d[None, :] < HEAD), other=0.0)


@triton.jit
def prepare_query(q, softmax_scale, k_scale, KV_FP8: tl.constexpr):
    """(q in the compute dtype, scale still to apply to q.k).

    FP8 pages are computed in fp16: e4m3 -> fp16 is one instruction per two values on sm90,
    while e4m3 -> bf16 goes through fp32. q is pre-multiplied by the softmax scale in fp32 before
    its fp16 cast, so a large bf16 query cannot overflow fp16 (and fp16 keeps more mantissa bits
    than the bf16 input had)."""
    if KV_FP8:
        q = (q.to(tl.float32) * softmax_scale).to(tl.float16)
        scale = k_scale
    else:
        scale = softmax_scale * k_scale
    return q, scale


@triton.constexpr_function
def _e4m3_type_builds():
    """Whether the build target types e4m3 (float8e4nv): Triton 3.6 rejects the type on NVIDIA GPUs
    before sm89 (A100: "type fp8e4nv not supported in this architecture")."""
    return not is_cuda() or cuda_capability_geq(8, 9)


def kernel_cache(cache: torch.Tensor) -> torch.Tensor:
    """A K/V cache as the Triton kernels take it: FP8 pages as their bytes (uint8, which every build
    target types), converted in the kernel by `compute_values`; other caches as they are."""
    return cache.view(torch.uint8) if cache.dtype == torch.float8_e4m3fn else cache


@triton.jit
def compute_values(x, dtype, KV_FP8: tl.constexpr):
    """A loaded K/V tile in the compute dtype. FP8 tiles arrive as e4m3 bytes (`kernel_cache`); where
    the target types e4m3 they are reinterpreted and converted by Triton (sm90: one instruction per
    two values), elsewhere by integer operations: sign and the 7 exponent-mantissa bits moved into
    an fp16 pattern give the value times 2^-8 exactly (subnormals included; e4m3's NaN bytes become
    +-480), and the exact fp16 product by 2^8 restores it."""
    if not KV_FP8:
        values = x.to(dtype)
    elif _e4m3_type_builds():
        values = x.to(tl.float8e4nv, bitcast=True).to(dtype)
    else:
        bits = x.to(tl.uint16)
        scaled = (((bits & 0x80) << 8) | ((bits & 0x7F) << 7)).to(tl.float16, bitcast=True)
        values = (scaled * 256.0).to(dtype)
    return values


@triton.jit
def _log2_scores(s, score_scale, softcap, HAS_SOFTCAP: tl.constexpr):
    """Raw dot products -> scaled (and optionally soft-capped) scores in log2 units.

    score_scale = softmax_scale * k_scale; softcap c maps x -> c * tanh(x / c)."""
    if HAS_SOFTCAP:
        x = s * (score_scale / softcap)
        tanh = 1.0 - 2.0 / (tl.exp2(x * (2.0 * LOG2E)) + 1.0)
        return tanh * (softcap * LOG2E)
    return s * (score_scale * LOG2E)


@triton.constexpr_function
def _key_axis(kv_major):
    """Axis of the KV tile in the score block: 0 in kv-major S^T, 1 in row-major S."""
    return 0 if kv_major else 1


@triton.jit
def attend_tile(q, k, v, visible, acc, m_i, l_i, score_scale, softcap,
                HAS_SOFTCAP: tl.constexpr, KV_MAJOR: tl.constexpr):
    """One online-softmax step over a KV tile.

    row-major: q [BLOCK_M, D], visible [BLOCK_M, TILE_N], acc [BLOCK_M, D]
    kv-major:  q is Q^T [D, BLOCK_M], visible [TILE_N, BLOCK_M], acc is O^T [D, BLOCK_M]
    k, v: [TILE_N, D] in the compute dtype; m_i, l_i: [BLOCK_M] fp32.

    Lazy rescaling: m_i is the exponent base of acc and l_i, not necessarily the running maximum.
    It moves (and acc, l_i are rescaled) only when some row's maximum grew by more than
    RESCALE_SLACK, so most tiles skip the BLOCK_M x D multiply and p stays below 2^RESCALE_SLACK.
    Accumulating into the dot (`tl.dot(p, v, acc)`) leaves the P.V product in flight while the
    next tile starts.
    """
    if KV_MAJOR:
        s = tl.dot(k, q)  # [TILE_N, BLOCK_M]
    else:
        s = tl.dot(q, tl.trans(k))  # [BLOCK_M, TILE_N]
    s = tl.where(visible, _log2_scores(s, score_scale, softcap, HAS_SOFTCAP), float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, _key_axis(KV_MAJOR)))
    if cuda_capability_geq(10):  # Triton 3.6's sm100 build fails on a row vector's reduction to a scalar
        grew = tl.max(tl.expand_dims(m_new - m_i, 1)) > RESCALE_SLACK
    else:
        grew = tl.max(m_new - m_i, 0) > RESCALE_SLACK
    if grew:
        alpha = tl.exp2(m_i - m_new)
        acc = acc * tl.expand_dims(alpha, _key_axis(KV_MAJOR))
        l_i = l_i * alpha
        m_i = m_new
    p = tl.exp2(s - tl.expand_dims(m_i, _key_axis(KV_MAJOR)))
    l_i = l_i + tl.sum(p, _key_axis(KV_MAJOR))
    if KV_MAJOR:
        acc = tl.dot(tl.trans(v), p.to(v.dtype), acc)  # [D, BLOCK_M]
    else:
        acc = tl.dot(p.to(v.dtype), v, acc)  # [BLOCK_M, D]
    return acc, m_i, l_i


@triton.jit
def write_rows(acc, m_i, l_i, v_scale, row_ok, d_ok, out_ptrs, part_ptrs, lse_ptrs, SPLIT: tl.constexpr):
    """acc [BLOCK_M, D] unnormalised; rows with l == 0 (nothing visible) become 0 / lse -inf."""
    has_keys = l_i > 0.0
    inv = tl.where(has_keys, v_scale / tl.where(has_keys, l_i, 1.0), 0.0)
    o = acc * inv[:, None]
    mask = row_ok[:, None] & d_ok[None, :]
    if SPLIT:
        tl.store(part_ptrs, o, mask=mask)
        lse = tl.where(has_keys, m_i + tl.log2(tl.where(has_keys, l_i, 1.0)), float("-inf"))
        tl.store(lse_ptrs, lse, mask=row_ok)
    else:
        tl.store(out_ptrs, o.to(out_ptrs.dtype.element_ty), mask=mask)


@triton.jit
def _discard_l2_lines(ptrs, first_of_line):
    """Drop the L2 lines that start at `ptrs` where `first_of_line`, without writing them back."""
    tl.inline_asm_elementwise(
        "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p discard.global.L2 [$2], 128; mov.b32 $0, 0; }",
        "=r,r,l", [first_of_line.to(tl.int32), ptrs], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit(do_not_specialize=["num_rows", "queries_above", "queries_upto"])
def merge_splits_kernel(
    part_ptr, lse_ptr, out_ptr, cu_q_ptr,
    num_rows, num_splits, stride_out_row, stride_out_head, queries_above, queries_upto,
    NUM_HEADS: tl.constexpr, HEAD: tl.constexpr, HEAD_PAD: tl.constexpr, COLUMNS: tl.constexpr,
    SPLIT_CHUNK: tl.constexpr, DISCARD: tl.constexpr, ROWS_BY_SEQUENCE: tl.constexpr,
):
    """out[row, head, columns] = sum_s 2^(lse_s - M) o_s / sum_s 2^(lse_s - M) over one slice of
    COLUMNS head columns, SPLIT_CHUNK splits at a time with a running maximum M. A chunk's lse and
    partials are loaded together (one memory round trip); the partials of empty splits (lse -inf,
    never written) are loaded and discarded. Partials: part [num_splits, num_rows, NUM_HEADS,
    HEAD_PAD] fp32, lse [num_splits, num_rows, NUM_HEADS].

    ROWS_BY_SEQUENCE: partial row r is query r % queries_upto of sequence r // queries_upto
    (`ops.unified`'s per-sequence grid), written to out row cu_q[sequence] + query; rows past a
    sequence's queries and the sequences outside queries_above < queries <= queries_upto were never
    written, and their programs exit."""
    row = tl.program_id(0).to(tl.int64)
    head = tl.program_id(1)
    out_row = row
    if ROWS_BY_SEQUENCE:
        seq = row // queries_upto
        query = row % queries_upto
        q_first = tl.load(cu_q_ptr + seq)
        q_len = tl.load(cu_q_ptr + seq + 1) - q_first
        if (query >= q_len) | (q_len <= queries_above) | (q_len > queries_upto):
            return
        out_row = q_first + query
    offs_d = tl.program_id(2) * COLUMNS + tl.arange(0, COLUMNS)
    offs_c = tl.arange(0, SPLIT_CHUNK)
    d_ok = offs_d < HEAD  # the partials' padded head columns were never written
    top = tl.full([], float("-inf"), tl.float32)
    total = tl.zeros([], tl.float32)
    acc = tl.zeros([COLUMNS], tl.float32)
    for first in range(0, num_splits, SPLIT_CHUNK):
        split_ok = first + offs_c < num_splits
        slot = ((first + offs_c).to(tl.int64) * num_rows + row) * NUM_HEADS + head  # [SPLIT_CHUNK]
        lse = tl.load(lse_ptr + slot, mask=split_ok, other=float("-inf"))
        o = tl.load(part_ptr + slot[:, None] * HEAD_PAD + offs_d[None, :], mask=split_ok[:, None] & d_ok[None, :],
                    other=0.0)
        new_top = tl.maximum(top, tl.max(lse, 0))
        base = tl.where(new_top == float("-inf"), 0.0, new_top)
        rescale = tl.exp2(top - base)  # 0 while nothing was merged
        w = tl.exp2(lse - base)  # 0 for empty splits
        acc = acc * rescale + tl.sum(tl.where(w[:, None] > 0.0, o, 0.0) * w[:, None], 0)
        total = total * rescale + tl.sum(w, 0)
        top = new_top
        if DISCARD:
            tl.debug_barrier()  # every thread's loads of the chunk have returned: they fed acc
            lines = tl.program_id(2) * COLUMNS + tl.arange(0, COLUMNS // L2_LINE_VALUES) * L2_LINE_VALUES
            _discard_l2_lines(part_ptr + slot[:, None] * HEAD_PAD + lines[None, :],
                              split_ok[:, None] & (lines < HEAD)[None, :])
    res = acc / tl.where(total > 0.0, total, 1.0)
    tl.store(out_ptr + out_row * stride_out_row + head * stride_out_head + offs_d,
             res.to(out_ptr.dtype.element_ty), mask=d_ok)


def scale_args(scale):
    """(tensor or None, float value, is_tensor) for a per-tensor scale given as float/tensor/None."""
    if isinstance(scale, torch.Tensor):
        return scale, 1.0, True
    return None, 1.0 if scale is None else float(scale), False


def split_workspace(splits: int, rows: int, heads: int, head_pad: int, out: torch.Tensor):
    """fp32 partials [splits, rows, heads, head_pad] and their lse [splits, rows, heads]; with one
    split the kernels write `out` directly and these are placeholders the compiler drops."""
    if splits == 1:
        return out, out
    part = torch.empty(splits, rows, heads, head_pad, dtype=torch.float32, device=out.device)
    lse = torch.empty(splits, rows, heads, dtype=torch.float32, device=out.device)
    return part, lse


@functools.cache
def _discard_builds(device_index: int) -> bool:
    """Whether CUDA device `device_index` has `discard.global.L2` (PTX, sm80 and later; not ROCm)."""
    return torch.version.hip is None and torch.cuda.get_device_capability(device_index)[0] >= 8


def whole_lines(columns: int) -> bool:
    """Whether a merge program's slice of `columns` head columns is whole 128-byte L2 lines, which DISCARD needs."""
    return columns % L2_LINE_VALUES.value == 0


def merge_shape(splits: int, head_pad: int) -> tuple[int, int, int]:
    """(head columns per program, splits loaded at once, warps) of the merge of `splits` partials."""
    splits_pad = triton.next_power_of_2(splits)
    columns = min(head_pad, max(MERGE_MIN_COLUMNS, MERGE_VALUES // splits_pad))
    chunk = min(splits_pad, MERGE_MAX_VALUES // columns)
    return columns, chunk, max(MERGE_WARPS, chunk * columns // (32 * MERGE_VALUES_PER_THREAD))


@dataclass(frozen=True)
class RowsBySequence:
    """Partial rows laid out by sequence (`merge_splits_kernel`'s ROWS_BY_SEQUENCE): `queries_upto`
    rows per sequence of `cu_seqlens_q`, of which the sequences with queries_above < queries <=
    queries_upto are merged."""
    cu_seqlens_q: torch.Tensor
    queries_above: int
    queries_upto: int


def launch_merge_shaped(part, lse, out, columns: int, chunk: int, warps: int, discard: bool,
                        by_sequence: RowsBySequence | None = None) -> None:
    """Merge `part` [S, rows, H, D_PAD] / `lse` [S, rows, H] into `out` [rows, H, D] (or, `by_sequence`,
    into the rows of out its sequences' queries map to) with the given launch shape; `discard`: drop
    the partials' L2 lines after reading them, where the slice is whole lines (the merge probes
    launch other shapes through this too)."""
    splits, rows, heads, head_pad = part.shape
    if rows == 0:
        return
    seqs = by_sequence or RowsBySequence(lse, 0, 1)  # lse: a placeholder pointer the kernel never reads
    merge_splits_kernel[(rows, heads, head_pad // columns)](
        part, lse, out, seqs.cu_seqlens_q, rows, splits, out.stride(0), out.stride(1),
        seqs.queries_above, seqs.queries_upto,
        NUM_HEADS=heads, HEAD=out.shape[2], HEAD_PAD=head_pad, COLUMNS=columns, SPLIT_CHUNK=chunk,
        DISCARD=discard and whole_lines(columns), ROWS_BY_SEQUENCE=by_sequence is not None, num_warps=warps,
    )


def launch_merge(part, lse, out, by_sequence: RowsBySequence | None = None):
    """Merge `part` [S, rows, H, D_PAD] / `lse` [S, rows, H] into `out` [rows, H, D] (rows laid out
    `by_sequence`, if given) at `merge_shape`'s launch shape, dropping the partials' L2 lines where
    `out`'s GPU has the instruction."""
    discard = not interpreter_active() and out.is_cuda and _discard_builds(out.device.index)
    launch_merge_shaped(part, lse, out, *merge_shape(part.shape[0], part.shape[3]), discard, by_sequence)
