"""v39: build the probe kernel files under build/v39 (ignored; run this from the repository root before the A/B script,
and carry build/v39 to the device). Each probe is an edit of commit BASE's ops/verify_wgmma.py (the warpgroup-MMA
kernel that runs BF16 MTP verify) with its relative imports made absolute:
  vw_base.py    BASE's kernel as it is (the A/B's baseline);
  vw_lazy.py    O rescaled only when a warp votes for it: tile t's scores are masked and their row maxima taken
                before the step's second CTA barrier, each warp's vote (any of its 16 rows' maximum grown past the
                base by more than RESCALE_SLACK, one `vote.sync`) stored to shared memory, and that barrier (which
                the copies after it need anyway) publishes the votes; then the copies are issued, P taken against
                the base (moved only on a vote, for every row at once) and O's 128 registers per thread are
                multiplied only if a warp voted (the eager form multiplies them on every tile: 256 of the BF16
                loop's 857 instructions per two tiles);
  vw_order.py   vw_lazy.py's order (the barrier and the copies between the row maxima and P) with O rescaled on
                every tile as BASE does: what the reorder alone costs or saves.
v10 item 2 measured a lazy rescale on this kernel whose decision was a block-wide maximum (a reduction through shared
memory with a barrier of its own on every tile): 1.06x the time. Here the decision adds no barrier.
Each edit asserts that the text it replaces occurs once (`scripts/variant_source.replaced`).
Usage: make_variants.py (from the repository root)"""
import sys
from pathlib import Path
sys.path.insert(0, "scripts")
from variant_source import absolute_imports, git_show, replaced  # noqa: E402

OUT = Path("build/v39")
BASE = "9a493f1"  # v38's last commit
KERNEL = "pagedattn/ops/verify_wgmma.py"

IMPORTS_OLD = """from pagedattn.ops.common import LOG2E, launch_merge, scale_args, split_workspace
from pagedattn.ops.gluon_common import load_scale
"""
IMPORTS_NEW = """from pagedattn.ops.common import LOG2E, RESCALE_SLACK, launch_merge, scale_args, split_workspace
from pagedattn.ops.gluon_common import load_scale, warp_votes
"""

SOFTMAX_OLD = git_show(f"{BASE}:{KERNEL}").split("@gluon.jit\ndef _softmax_pv(")[1].split("\n\n\n")[0]
SOFTMAX_OLD = "def _softmax_pv(" + SOFTMAX_OLD
SOFTMAX_NEW = '''def _masked_scores(s, usable, m_i, votes_smem, t, tile_hi, q_pos, score_scale, TILE_N: gl.constexpr,
                   S_MMA: gl.constexpr):
    """Tile t's scores scaled and masked (causal; keys not usable and tiles past the segment) and each row's
    running maximum with them; LAZY: each warp's vote, whether any of its 16 rows' maximum grew past the base
    m_i by more than RESCALE_SLACK, stored to votes_smem [8, WARPS] (row r: lane 4 r's copy of every warp's
    vote) for the caller's barrier to publish."""
    pos = t * TILE_N + gl.arange(0, TILE_N, layout=gl.SliceLayout(0, S_MMA))
    visible = (pos[None, :] <= q_pos[:, None]) & usable[None, :] & (t < tile_hi)
    s = gl.where(visible, s * score_scale, float("-inf"))
    m_new = gl.maximum(m_i, gl.max(s, axis=1))
    if LAZY:  # warp w holds rows 16 w + r and 16 w + 8 + r (r = lane // 4): the larger growth, then the warp's vote
        own = gl.max(gl.reshape(m_new - m_i, [WARPS, 2, 8]), axis=1)
        votes_smem.store(gl.permute(warp_votes(own, RESCALE_SLACK), [1, 0]))
    return s, m_new


@gluon.jit
def _any_vote(votes_smem):
    """Whether any warp's vote in votes_smem [8, WARPS] is set, the same answer in every thread (row 0)."""
    EVERY_WARPS_VOTE: gl.constexpr = gl.BlockedLayout([WARPS], [32], [WARPS], [0])
    row0 = votes_smem._reinterpret(gl.float32, [8, WARPS], gl.SwizzledSharedLayout(1, 1, 1, order=[0])).index(0)
    return gl.max(row0.load(EVERY_WARPS_VOTE), axis=0) > 0.0


@gluon.jit
def _rescaled_pv(s, s_next, o, m_i, m_new, l_i, votes_smem, k_ring, v_ring, v_mma, t, STAGES: gl.constexpr,
                 KV_FP8: gl.constexpr, O_MMA: gl.constexpr, P_OP: gl.constexpr):
    """P of tile t's masked scores s against the base (LAZY: the base moves to the new maxima only on a
    vote, and O is rescaled only then), l, then start P.V (asynchronous) once s_next's Q.K^T is done."""
    _, v_op = _operands(k_ring, v_ring, v_mma, t, STAGES, KV_FP8)
    if LAZY:
        voted = _any_vote(votes_smem)
        m_new = gl.where(voted, m_new, m_i)
    alpha = gl.exp2(m_i - m_new)
    p = gl.exp2(s - m_new[:, None])
    l_i = l_i * alpha + gl.sum(p, axis=1)
    p_op = gl.convert_layout(p.to(v_op.dtype), P_OP)
    s_next = warpgroup_mma_wait(num_outstanding=0, deps=(s_next,))  # nothing in flight while O is rescaled
    if LAZY:
        if voted:
            o = o * gl.convert_layout(alpha, gl.SliceLayout(1, O_MMA))[:, None]
    else:
        o = o * gl.convert_layout(alpha, gl.SliceLayout(1, O_MMA))[:, None]
    o = warpgroup_mma(p_op, v_op, o, is_async=True)
    return o, m_new, l_i, s_next'''

WARPS_OLD = "WARPS = gl.constexpr(WGMMA_WARPS)\n"
WARPS_NEW = WARPS_OLD + "LAZY = gl.constexpr({lazy})  # O rescaled only on a warp's vote\n"
ALLOC_OLD = "    usable_smem = gl.allocate_shared_memory(gl.int8, [STAGES, TILE_N], gl.SwizzledSharedLayout(1, 1, 1, order=[0]))\n"
ALLOC_NEW = ALLOC_OLD + \
    "    votes_smem = gl.allocate_shared_memory(gl.float32, [8, WARPS], gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0]))\n"

LOOP_OLD = """        s_b, ok_b = _scores_next(q_smem, q_rest, k_ring, v_ring, v_mma, usable_smem, t + 1, STAGES - 3, STAGES,
                                 TILE_N, S_MMA, KV_FP8, COPY)
        s_a, o = warpgroup_mma_wait(num_outstanding=1, deps=(s_a, o))
        o, m_i, l_i, s_b = _softmax_pv(s_a, ok_a, s_b, o, m_i, l_i, k_ring, v_ring, v_mma, t, tile_hi, q_pos,
                                       score_scale, TILE_N, STAGES, KV_FP8, S_MMA, O_MMA, P_OP)
"""
LOOP_NEW = """        s_a, m_new = _masked_scores(s_a, ok_a, m_i, votes_smem, t, tile_hi, q_pos, score_scale, TILE_N, S_MMA)
        s_b, ok_b = _scores_next(q_smem, q_rest, k_ring, v_ring, v_mma, usable_smem, t + 1, STAGES - 3, STAGES,
                                 TILE_N, S_MMA, KV_FP8, COPY)  # its barrier publishes the warps' votes
        o = warpgroup_mma_wait(num_outstanding=1, deps=(o,))
        o, m_i, l_i, s_b = _rescaled_pv(s_a, s_b, o, m_i, m_new, l_i, votes_smem, k_ring, v_ring, v_mma, t, STAGES,
                                        KV_FP8, O_MMA, P_OP)
"""
LOOP_B_OLD = """        s_a, ok_a = _scores_next(q_smem, q_rest, k_ring, v_ring, v_mma, usable_smem, t + 2, STAGES - 3, STAGES,
                                 TILE_N, S_MMA, KV_FP8, COPY)
        s_b, o = warpgroup_mma_wait(num_outstanding=1, deps=(s_b, o))
        o, m_i, l_i, s_a = _softmax_pv(s_b, ok_b, s_a, o, m_i, l_i, k_ring, v_ring, v_mma, t + 1, tile_hi,
                                       q_pos, score_scale, TILE_N, STAGES, KV_FP8, S_MMA, O_MMA, P_OP)
"""
LOOP_B_NEW = """        s_b, m_new = _masked_scores(s_b, ok_b, m_i, votes_smem, t + 1, tile_hi, q_pos, score_scale, TILE_N, S_MMA)
        s_a, ok_a = _scores_next(q_smem, q_rest, k_ring, v_ring, v_mma, usable_smem, t + 2, STAGES - 3, STAGES,
                                 TILE_N, S_MMA, KV_FP8, COPY)
        o = warpgroup_mma_wait(num_outstanding=1, deps=(o,))
        o, m_i, l_i, s_a = _rescaled_pv(s_b, s_a, o, m_i, m_new, l_i, votes_smem, k_ring, v_ring, v_mma, t + 1,
                                        STAGES, KV_FP8, O_MMA, P_OP)
"""


def probe(base: str, lazy: bool) -> str:
    return replaced(base, (IMPORTS_OLD, IMPORTS_NEW), (SOFTMAX_OLD, SOFTMAX_NEW),
                    (WARPS_OLD, WARPS_NEW.format(lazy=lazy)), (ALLOC_OLD, ALLOC_NEW),
                    (LOOP_OLD, LOOP_NEW), (LOOP_B_OLD, LOOP_B_NEW))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    base = absolute_imports(git_show(f"{BASE}:{KERNEL}"))
    (OUT / "vw_base.py").write_text(base)
    (OUT / "vw_lazy.py").write_text(probe(base, True))
    (OUT / "vw_order.py").write_text(probe(base, False))


if __name__ == "__main__":
    main()
