"""Helpers shared by the Gluon kernels (ops/verify_wgmma.py, ops/unified_keys_rows.py,
ops/sparse_exchange.py, ops/sparse_keys_rows.py): a per-tensor scale read, the in-register
conversion of FP8 pages' paired values, the keys-as-rows kernels' output rows, and a warp's vote
with its read back by every thread.
Both kernel families' table hashes cover this file (profiles/tables.py), so each kernel file
hashes only its own family's code: an edit of a sparse kernel leaves the unified table current,
and back.
No launch parameters are decided here.
"""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def load_scale(scale_ptr, scale_value, IS_TENSOR: gl.constexpr):
    """A per-tensor dequantisation scale given as a device tensor (read here: no host sync) or a
    float: the Gluon form of ops/common.py's `load_scale`."""
    if IS_TENSOR:
        return gl.load(scale_ptr).to(gl.float32)
    return scale_value


@gluon.jit
def fp8_pairs_to_fp16(pairs):
    """Each int16 of `pairs` holds two e4m3 values (head dimension 2c in its low byte, 2c + 1 in its
    high byte); returns the fp16 values of the low bytes and of the high bytes, in `pairs`' layout:
    per 32-bit register (two int16, consecutive keys or dimensions of one operand), one byte permute
    puts both low bytes in its low half and both high bytes in its high half, then one paired
    conversion per half (perf-notes v12: integer-op conversions of half the bytes were 1.15x slower)."""
    return gl.inline_asm_elementwise(
        """{
        .reg .b32 sorted;
        .reg .b16 low, high;
        prmt.b32 sorted, $2, 0, 0x3120;
        mov.b32 {low, high}, sorted;
        cvt.rn.f16x2.e4m3x2 $0, low;
        cvt.rn.f16x2.e4m3x2 $1, high;
        }""",
        "=r,=r,r", [pairs], dtype=(gl.float16, gl.float16), is_pure=True, pack=2)


@gluon.jit
def scaled_halves(o_even, o_odd, l_sum, v_scale):
    """The keys-as-rows kernels' O^T halves (even and odd head dimensions, one column per query row)
    divided by each column's row sum l_sum and times v_scale, joined as [head size / 2, columns, 2]
    in their registers; a column that saw no key (l_sum 0) gives 0. Returns them and which columns
    saw keys."""
    has_keys = l_sum > 0.0
    o_scale = gl.convert_layout(gl.where(has_keys, v_scale / gl.where(has_keys, l_sum, 1.0), 0.0),
                                gl.SliceLayout(0, o_even.type.layout))
    return gl.join(o_even * o_scale[None, :], o_odd * o_scale[None, :]), has_keys


@gluon.jit
def interleaved_rows(o_even, o_odd, l_sum, v_scale, OUT: gl.constexpr):
    """`scaled_halves` interleaved back into [columns, head size] rows in layout OUT (a layout change
    through shared memory). Returns the rows and which columns saw keys."""
    o, has_keys = scaled_halves(o_even, o_odd, l_sum, v_scale)
    return gl.convert_layout(gl.reshape(gl.permute(o, [1, 0, 2]), [o_even.shape[1], 2 * o_even.shape[0]]), OUT), has_keys


@gluon.jit
def warp_votes(x, bound):
    """1.0 in every lane of a warp if any lane's x exceeds `bound`, else 0.0 (one element per thread):
    vote.sync.any, where a maximum over the warp's lanes takes a tree of five shuffles."""
    return gl.inline_asm_elementwise(
        """{
        .reg .pred above, any;
        setp.gt.f32 above, $1, $2;
        vote.sync.any.pred any, above, 0xffffffff;
        selp.f32 $0, 0f3F800000, 0f00000000, any;
        }""",
        "=r,r,r", [x, gl.full_like(x, bound)], dtype=gl.float32, is_pure=True, pack=1)


@gluon.jit
def any_warp_voted(votes_smem):
    """Whether any warp's vote is set, the same answer in every thread: votes_smem [32, warps] holds
    each thread's `warp_votes` value (a row per lane, a column per warp), stored and made visible by
    the caller's barrier; every thread reads lane 0's row."""
    WARPS: gl.constexpr = votes_smem.shape[1]
    EVERY_WARPS_VOTE: gl.constexpr = gl.BlockedLayout([WARPS], [32], [WARPS], [0])  # all of them in every thread
    lane0 = votes_smem._reinterpret(gl.float32, [32, WARPS], gl.SwizzledSharedLayout(1, 1, 1, order=[0])).index(0)
    return gl.max(lane0.load(EVERY_WARPS_VOTE), axis=0) > 0.0
