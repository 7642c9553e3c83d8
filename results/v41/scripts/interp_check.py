"""v41, on the CPU: stream_merge.py's merge under the Triton interpreter against `launch_merge` on random partials
(13, 256 and 6 splits; one split empty), every flag already set to the call's number. Its inline-assembly helpers
(the conditional fence, nanosleep) do not interpret, so they are replaced by a helper that returns 0; the L2 discard
is off. Prints splits, the largest difference from `launch_merge`'s output, whether any value is NaN, and sync
(expected [1, 0]: the number advanced, the end counter reset).
Usage: PYTHONPATH=.:results/v41/scripts python3 results/v41/scripts/interp_check.py"""
import os

os.environ["TRITON_INTERPRET"] = "1"
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402,F401  (the interpreter needs it visible from the jit helper below)

import stream_merge as sm  # noqa: E402
from pagedattn.ops.common import launch_merge  # noqa: E402


@triton.jit
def _zero_after(x):
    return x * 0


sm.stream_merge_kernel.fn.__globals__.update(_fence_if=_zero_after, _sleep_if=_zero_after)
torch.manual_seed(0)
for splits, rows, heads, d in ((13, 3, 4, 256), (256, 1, 2, 256), (6, 2, 16, 128)):
    part = torch.randn(splits, rows, heads, d)
    lse = torch.randn(splits, rows, heads) * 4
    lse[splits // 2] = float("-inf")
    expected = torch.empty(rows, heads, d, dtype=torch.bfloat16)
    launch_merge(part, lse, expected)
    flags, sync = sm.stream_workspace(splits, rows, heads, d, "cpu")
    flags.fill_(1)
    out = torch.full((rows, heads, d), float("nan"), dtype=torch.bfloat16)
    columns, _, warps = sm.merge_shape(splits, d)
    grid = (rows, heads, d // columns)
    sm.stream_merge_kernel[grid](part, lse, flags, sync, out, rows, splits, out.stride(0), out.stride(1),
                                 grid[0] * grid[1] * grid[2], NUM_HEADS=heads, HEAD=d, HEAD_PAD=d, COLUMNS=columns,
                                 SPLIT_PAD=triton.next_power_of_2(splits), DISCARD=False, WAIT=False, num_warps=warps)
    print(splits, (out.float() - expected.float()).abs().max().item(), bool(out.isnan().any()), sync.tolist())
