"""The split merge kernel on its own: random partials against a float64 merge.

A program takes a slice of head columns and loops over chunks of splits; the cases cover one chunk
and several (a last chunk partly past num_splits), one column slice and several, a head size with
padded columns, empty splits whose partials are NaN (loaded, they must be discarded), a row with
every split empty (its output is 0), both warp counts, and on a GPU both forms of the merge: dropping
the partials' L2 lines after reading them (column slices of whole 128-byte lines) and not (head size
16). Partials laid out by sequence (a split short launch of `ops.unified`) go to their sequences'
rows only.
"""

import pytest
import torch
import triton

from pagedattn.ops.common import RowsBySequence, launch_merge, merge_shape, whole_lines

from conftest import assert_close_to_reference, nan_like


def merge_reference(part: torch.Tensor, lse: torch.Tensor, head: int) -> torch.Tensor:
    """float64: sum_s 2^lse_s o_s / sum_s 2^lse_s over the non-empty splits, 0 where all are empty."""
    part, lse = part[..., :head].double(), lse.double()
    weight = torch.exp2(lse - lse.amax(0).clamp(min=-1e300)).nan_to_num(0.0)  # [S, rows, H]
    num = (torch.where(weight[..., None] > 0, part, 0.0) * weight[..., None]).sum(0)
    den = weight.sum(0)[..., None]
    return torch.where(den > 0, num / den.clamp(min=1e-300), 0.0)


@pytest.mark.parametrize("splits", [2, 5, 64, 65, 200, 300])
@pytest.mark.parametrize("head", [16, 64, 80, 256])
def test_merge_matches_float64(device, splits, head):
    gen = torch.Generator().manual_seed(splits * 1000 + head)
    rows, heads, head_pad = 3, 2, triton.next_power_of_2(head)
    part = torch.randn(splits, rows, heads, head_pad, generator=gen)
    lse = torch.randn(splits, rows, heads, generator=gen) * 4.0
    empty = torch.rand(splits, rows, heads, generator=gen) < 0.3
    empty[:, 1, 0] = True  # one (row, head) with nothing to merge
    lse[empty] = float("-inf")
    part[empty] = float("nan")
    part[..., head:] = float("nan")  # padded columns are never written by the attention kernels
    out = nan_like(torch.empty(rows, heads, head, dtype=torch.bfloat16, device=device))
    launch_merge(part.to(device), lse.to(device), out)
    ref = merge_reference(part, lse, head)
    assert_close_to_reference(out.cpu().double(), ref)
    assert (out[1, 0] == 0).all()


@pytest.mark.parametrize("splits", [3, 300])
def test_partials_laid_out_by_sequence_go_to_their_sequences_rows(device, splits):
    """`RowsBySequence`: 4 partial rows per sequence; sequences of 1-4 queries are merged into the rows
    cu_q[s] + i, the rest (a 6-query sequence, rows past a sequence's queries, whose partials are
    NaN) are left as they were."""
    gen = torch.Generator().manual_seed(splits)
    query_lens, upto, heads, head = [1, 6, 4, 2], 4, 2, 64
    cu_q = torch.tensor([0] + query_lens).cumsum(0).to(torch.int32)
    part = torch.randn(splits, len(query_lens) * upto, heads, head, generator=gen)
    lse = torch.randn(splits, len(query_lens) * upto, heads, generator=gen) * 4.0
    mine = torch.tensor([n <= upto and i < n for n in query_lens for i in range(upto)])
    part[:, ~mine], lse[:, ~mine] = float("nan"), float("nan")
    out = nan_like(torch.empty(int(cu_q[-1]), heads, head, dtype=torch.bfloat16, device=device))
    launch_merge(part.to(device), lse.to(device), out, RowsBySequence(cu_q.to(device), 0, upto))
    rows = torch.tensor([int(cu_q[s]) + i for s, n in enumerate(query_lens) for i in range(upto) if n <= upto and i < n])
    written = torch.zeros(out.shape[0], dtype=torch.bool)
    written[rows] = True
    assert_close_to_reference(out[rows].cpu().double(), merge_reference(part[:, mine], lse[:, mine], head))
    assert out[~written.to(device)].isnan().all()


def test_the_cases_cover_several_chunks_and_column_slices():
    """Guards the parametrisation above against a change of the merge constants."""
    assert merge_shape(300, 256)[1] < 300  # 300 splits take more than one chunk
    assert merge_shape(200, 64)[0] < 64  # 200 splits (256 padded) slice D=64 into several programs
    assert {merge_shape(splits, 256)[2] for splits in (2, 200)} == {2, 4}  # both warp counts
    assert not whole_lines(merge_shape(5, 16)[0])  # head size 16: no whole lines to drop
    assert whole_lines(merge_shape(5, 64)[0])
