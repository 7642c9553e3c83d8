"""v41 probe: a split merge that runs beside the attention kernel and merges each split's partials as they land.

Today's merge (`ops.common.launch_merge`) starts when the attention kernel has ended: a launch gap (0.4-1.3 us in a
graph) and its own round trips (lse, partials; 2.2 us at the FP8 long request q=1, 4.8 us at BF16 MTP) follow the
kernel's last program (perf-notes v18 item 2, v21 item 1). Here:
* the attention kernel's programs release the merge at their start (`griddepcontrol.launch_dependents`), and the
  merge is a programmatic dependent launch without `griddepcontrol.wait`: its programs are scheduled once every
  attention program has started (so they never hold an SM slot an attention program waits for) and run in the
  slots the attention programs leave free, or, where those are full, as the attention programs end;
* each attention program, after its fp32 partial rows and lse are stored, fences them at GPU scope (every thread),
  meets at a CTA barrier and sets one flag per partial row to this call's number (`publish`);
* each merge program (a row, a head, a slice of head columns, every split at once: `merge_shape`'s one-chunk case)
  polls its rows' flags (`nanosleep` between polls), and merges the partials whose flag carries this call's number
  as they arrive (online log-sum-exp with a running maximum), so when the last split lands only its own partial is
  left to read; it drops the partials' L2 lines after reading them, as `launch_merge` does;
* the call's number: `sync[0] + 1`, read by both kernels; the merge program that ends last (a counter in sync[1])
  resets the counter and advances sync[0], so the next call's flags differ from this call's and nothing is cleared
  between calls (a CUDA graph replays the same arguments). The flags and sync live in one buffer per shape and
  device, zeroed once and kept for the process (a captured graph holds their address).
A merge program that has polled MAX_POLLS times without every flag writes NaN instead of hanging.
Probe only: one stream at a time uses a buffer (two streams' calls at once would share the numbers)."""
import torch
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from pagedattn.ops.common import _discard_l2_lines, L2_LINE_VALUES, launch_merge, merge_shape, whole_lines

MAX_POLLS = tl.constexpr(1 << 20)

_buffers: dict = {}
wait_for_kernel = False  # the A/B's stream_wait: the merge waits for the whole kernel (griddepcontrol.wait) first


def stream_workspace(splits: int, rows: int, heads: int, head_pad: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """(flags [splits, rows, heads] int32, sync [2] int32): this shape's persistent buffer, zeroed when first made
    (a shape either always streams or never: `launch_stream_merge`)."""
    key = (str(device), splits, rows, heads, head_pad)
    if key not in _buffers:
        _buffers[key] = torch.zeros(2 + splits * rows * heads, dtype=torch.int32, device=device)
    buf = _buffers[key]
    return buf[2:].view(splits, rows, heads), buf[:2]


@gluon.jit
def launch_dependents():
    """Let the dependent merge be scheduled once every program of this kernel has passed here."""
    gl.inline_asm_elementwise("griddepcontrol.launch_dependents; mov.b32 $0, 0;", "=r", [], dtype=gl.int32,
                              is_pure=False, pack=1)


@gluon.jit
def publish(flag_ptrs, number, mask):
    """After this program's partial and lse stores: the CTA meets, one thread fences at GPU scope (cumulative over
    the stores the barrier ordered before it: cooperative groups' grid barrier does the same), the CTA meets again,
    and the flags of the partial rows (`mask`) are set to `number`. One fence per program: fences from every
    thread (v41 call 1) cost the workers' loop 1.08-1.22x the time."""
    gl.thread_barrier()
    gl.inline_asm_elementwise(
        "{ .reg .pred p; .reg .b32 t; mov.u32 t, %tid.x; setp.eq.u32 p, t, 0; @p fence.acq_rel.gpu; mov.b32 $0, 0; }",
        "=r", [], dtype=gl.int32, is_pure=False, pack=1)
    gl.thread_barrier()
    gl.atomic_xchg(flag_ptrs, mask.to(gl.int32) * 0 + number, mask=mask, sem="relaxed", scope="gpu")


@triton.jit
def _fence_if(x):
    """fence.acq_rel.gpu where x != 0, issued once x is known; returns 0 (loads masked by it come after)."""
    return tl.inline_asm_elementwise(
        "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p fence.acq_rel.gpu; mov.b32 $0, 0; }", "=r,r", [x],
        dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _wait_for_kernel():
    """griddepcontrol.wait: until the kernel this one depends on has ended and its writes are visible."""
    return tl.inline_asm_elementwise("griddepcontrol.wait; mov.b32 $0, 0;", "=r", [], dtype=tl.int32,
                                     is_pure=False, pack=1)


@triton.jit
def _sleep_if(x):
    """nanosleep (200 ns) where x != 0; returns 0."""
    return tl.inline_asm_elementwise(
        "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p nanosleep.u32 200; mov.b32 $0, 0; }", "=r,r", [x],
        dtype=tl.int32, is_pure=False, pack=1)


@triton.jit(do_not_specialize=["num_rows", "programs"])
def stream_merge_kernel(
    part_ptr, lse_ptr, flag_ptr, sync_ptr, out_ptr,
    num_rows, num_splits, stride_out_row, stride_out_head, programs,
    NUM_HEADS: tl.constexpr, HEAD: tl.constexpr, HEAD_PAD: tl.constexpr, COLUMNS: tl.constexpr,
    SPLIT_PAD: tl.constexpr, DISCARD: tl.constexpr, WAIT: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    head = tl.program_id(1)
    offs_d = tl.program_id(2) * COLUMNS + tl.arange(0, COLUMNS)
    offs_s = tl.arange(0, SPLIT_PAD)
    d_ok = offs_d < HEAD
    slot = (offs_s.to(tl.int64) * num_rows + row) * NUM_HEADS + head
    if WAIT:
        _wait_for_kernel()
    number = tl.load(sync_ptr, volatile=True) + 1
    pending = offs_s < num_splits
    top = tl.full([], float("-inf"), tl.float32)
    total = tl.zeros([], tl.float32)
    acc = tl.zeros([COLUMNS], tl.float32)
    left = tl.sum(pending.to(tl.int32), 0)
    polls = 0
    while (left > 0) & (polls < MAX_POLLS):
        flags = tl.load(flag_ptr + slot, mask=pending, other=0, volatile=True)
        # threads holding the same split read its flag at different times: one answer for all of them (the row's
        # maximum over its columns), or they would merge different splits (v41 call 1: wrong rows at B=20)
        seen = (pending & (flags == number)).to(tl.int32)[:, None] * d_ok.to(tl.int32)[None, :]
        ready = tl.max(seen, axis=1) > 0
        ready = ready & (_fence_if(tl.max(ready.to(tl.int32), 0)) == 0)
        lse = tl.load(lse_ptr + slot, mask=ready, other=float("-inf"), cache_modifier=".cg")
        o = tl.load(part_ptr + slot[:, None] * HEAD_PAD + offs_d[None, :], mask=ready[:, None] & d_ok[None, :],
                    other=0.0, cache_modifier=".cg")
        new_top = tl.maximum(top, tl.max(lse, 0))
        base = tl.where(new_top == float("-inf"), 0.0, new_top)
        rescale = tl.exp2(top - base)
        w = tl.exp2(lse - base)
        acc = acc * rescale + tl.sum(tl.where(w[:, None] > 0.0, o, 0.0) * w[:, None], 0)
        total = total * rescale + tl.sum(w, 0)
        top = new_top
        if DISCARD:
            tl.debug_barrier()
            lines = tl.program_id(2) * COLUMNS + tl.arange(0, COLUMNS // L2_LINE_VALUES) * L2_LINE_VALUES
            _discard_l2_lines(part_ptr + slot[:, None] * HEAD_PAD + lines[None, :],
                              ready[:, None] & (lines < HEAD)[None, :])
        pending = pending & (ready == 0)
        left = tl.sum(pending.to(tl.int32), 0)
        polls += 1 + _sleep_if(left)
    res = tl.where(left > 0, float("nan"), acc / tl.where(total > 0.0, total, 1.0))
    tl.store(out_ptr + row * stride_out_row + head * stride_out_head + offs_d, res.to(out_ptr.dtype.element_ty),
             mask=d_ok)
    ended = tl.atomic_add(sync_ptr + 1, 1, sem="acq_rel", scope="gpu")
    if ended == programs - 1:
        tl.atomic_xchg(sync_ptr + 1, 0, sem="relaxed", scope="gpu")
        tl.atomic_xchg(sync_ptr, number, sem="release", scope="gpu")


def launch_stream_merge(part, lse, flags, sync, out) -> None:
    """Merge `part` [S, rows, H, D_PAD] / `lse` [S, rows, H] into `out` [rows, H, D] as the flags say they land;
    launched right after the attention kernel that writes them, as its programmatic dependent. Where a program could
    not hold every split's slice at once (over 256 splits at head size 256), `launch_merge` merges after the kernel."""
    splits, rows, heads, head_pad = part.shape
    columns, chunk, warps = merge_shape(splits, head_pad)
    split_pad = triton.next_power_of_2(splits)
    if chunk < split_pad:
        launch_merge(part, lse, out)
        return
    grid = (rows, heads, head_pad // columns)
    stream_merge_kernel[grid](
        part, lse, flags, sync, out, rows, splits, out.stride(0), out.stride(1), grid[0] * grid[1] * grid[2],
        NUM_HEADS=heads, HEAD=out.shape[2], HEAD_PAD=head_pad, COLUMNS=columns, SPLIT_PAD=split_pad,
        DISCARD=whole_lines(columns), WAIT=wait_for_kernel, num_warps=warps, launch_pdl=True,
    )
