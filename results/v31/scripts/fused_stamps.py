"""v31 call 6: where the in-kernel merge's time goes (v2, build/v31/ukr_fused_v2.py) against the library's
kernel + merge kernel. Builds stamped copies (build/v31/ukr_fused_v2_stamped.py, ukr_library_stamped.py; run
make_variants.py first) with %globaltimer read at the kernel's entry and, per program: the fused copy when it
enters `_arrive_and_merge` (its partial stores issued), when its ticket returns, when a merger leaves its wait,
and when it has merged and counted itself again, with its ticket and SM; the library copy at its entry and
after its lse store. Each is launched eagerly 40 times over the bench's rotated input sets of the FP8 long request
(q=1, q=4; the H200 table's profiles), and each launch summarized (us from its first program's start); medians over
launches 9-40. Then graph times of the four kernels (`ab_probe.check_and_time`), the stamps' cost.
Usage: fused_stamps.py OUT.json | --build"""
import json, statistics, sys
from pathlib import Path

FIELDS = ("start", "stored", "arrived", "released", "merged", "ticket", "smid")

HELPERS = '''

STAMPS = None  # int64 [programs, 8], set by the probe


@gluon.jit
def _now(x):
    return gl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [x], dtype=gl.int64, is_pure=False, pack=1)


@gluon.jit
def _record(stamp_ptr, zero, WARPS: gl.constexpr, t0, t1, t2, t3, t4, t5):
    STAMP: gl.constexpr = gl.BlockedLayout([1], [32], [WARPS], [0])
    lane = gl.arange(0, 32 * WARPS, layout=STAMP)
    smid = gl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [zero], dtype=gl.int32, is_pure=False, pack=1)
    program = (gl.program_id(0) * gl.num_programs(1) + gl.program_id(1)) * gl.num_programs(2) + gl.program_id(2)
    value = smid.to(gl.int64)
    value = gl.where(lane == 0, t0, value)
    value = gl.where(lane == 1, t1, value)
    value = gl.where(lane == 2, t2, value)
    value = gl.where(lane == 3, t3, value)
    value = gl.where(lane == 4, t4, value)
    value = gl.where(lane == 5, t5, value)
    gl.store(stamp_ptr + program.to(gl.int64) * 8 + lane, value, mask=lane < 7)
'''

START = ("    WARPS: gl.constexpr = TILE_N // 16  # each warp's 16 keys of a step are its rows of S^T\n",
         "    WARPS: gl.constexpr = TILE_N // 16  # each warp's 16 keys of a step are its rows of S^T\n"
         "    zero = gl.zeros([32 * WARPS], gl.int32, gl.BlockedLayout([1], [32], [WARPS], [0]))\n"
         "    t_start = _now(zero)\n")


def build() -> None:
    sys.path.insert(0, "scripts")
    from variant_source import replaced
    fused = Path("build/v31/ukr_fused_v2.py").read_text()
    fused = replaced(
        fused, ("\n\n@gluon.jit\ndef _discard_lines(", HELPERS + "\n\n@gluon.jit\ndef _discard_lines("), START,
        ("v_scale_value, q_blocks,\n", "v_scale_value, q_blocks, stamp_ptr,\n"),
        ("v_scale_v, q_blocks,\n", "v_scale_v, q_blocks, STAMPS,\n"),
        ("                      DISCARD: gl.constexpr):", "                      DISCARD: gl.constexpr, stamp_ptr, t_start, zero):"),
        ("    gl.thread_barrier()  # every thread's partial stores precede the release below\n"
         "    ticket = gl.atomic_add(counter, 1, sem=\"acq_rel\", scope=\"gpu\")\n",
         "    t_stored = _now(zero)\n"
         "    gl.thread_barrier()  # every thread's partial stores precede the release below\n"
         "    ticket = gl.atomic_add(counter, 1, sem=\"acq_rel\", scope=\"gpu\")\n"
         "    t_arrived = _now(zero)\n    t_released = t_arrived\n    t_merged = t_arrived\n"),
        ("            seen = gl.atomic_add(counter, 0, sem=\"acquire\", scope=\"gpu\")\n",
         "            seen = gl.atomic_add(counter, 0, sem=\"acquire\", scope=\"gpu\")\n        t_released = _now(zero)\n"),
        ("            gl.atomic_xchg(counter, 0, sem=\"relaxed\", scope=\"gpu\")\n",
         "            gl.atomic_xchg(counter, 0, sem=\"relaxed\", scope=\"gpu\")\n        t_merged = _now(zero)\n"
         "    _record(stamp_ptr, zero, WARPS, t_start, t_stored, t_arrived, t_released, t_merged,\n"
         "            ticket + zero.to(gl.int64))\n"),
        ("GROUP, HN, D, COLUMNS, CHUNK_S, WARPS, DISCARD)", "GROUP, HN, D, COLUMNS, CHUNK_S, WARPS, DISCARD, stamp_ptr, t_start, zero)"),
        ("CHUNK_S,\n                                  WARPS, DISCARD)", "CHUNK_S,\n                                  WARPS, DISCARD, stamp_ptr, t_start, zero)"))
    Path("build/v31/ukr_fused_v2_stamped.py").write_text(fused)
    sys.path.insert(0, "scripts")
    from variant_source import absolute_imports
    lib = absolute_imports(Path("pagedattn/ops/unified_keys_rows.py").read_text())
    lib = replaced(
        lib, ("\n\n@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS", HELPERS + "\n\n@gluon.jit(do_not_specialize=BATCH_SIZED_ARGS"),
        START, ("v_scale_value, q_blocks,\n", "v_scale_value, q_blocks, stamp_ptr,\n"),
        ("v_scale_v, q_blocks,\n", "v_scale_v, q_blocks, STAMPS,\n"),
        ("        gl.store(lse_ptr + part_cols, lse, mask=col_ok)\n",
         "        gl.store(lse_ptr + part_cols, lse, mask=col_ok)\n        t_end = _now(zero)\n"
         "        _record(stamp_ptr, zero, WARPS, t_start, t_end, t_end * 0, t_end * 0, t_end * 0, t_end * 0 - 1)\n"))
    Path("build/v31/ukr_library_stamped.py").write_text(lib)


def median(xs):
    return statistics.median(xs) if xs else None


def summarize(rows, fused: bool) -> dict:
    st = [dict(zip(FIELDS, r)) for r in rows]
    t0 = min(r["start"] for r in st)
    us = lambda x: (x - t0) / 1e3  # noqa: E731
    stored = sorted(us(r["stored"]) for r in st)
    out = {"stored_min_p50_max": [stored[0], median(stored), stored[-1]]}
    if fused:
        last = max(r["arrived"] for r in st)
        mergers = [r for r in st if r["released"] != r["arrived"] or r["arrived"] == last]
        sms = {}
        for r in mergers:
            sms[r["smid"]] = sms.get(r["smid"], 0) + 1
        out.update({
            "arrive_us_p50": median([(r["arrived"] - r["stored"]) / 1e3 for r in st]),
            "last_arrival": us(last), "mergers": len(mergers), "merger_sms": len(sms), "mergers_per_sm_max": max(sms.values()),
            "release_after_last_p50_max": [median([(r["released"] - last) / 1e3 for r in mergers]),
                                           max((r["released"] - last) / 1e3 for r in mergers)],
            "merge_us_p50_max": [median([(r["merged"] - r["released"]) / 1e3 for r in mergers]),
                                 max((r["merged"] - r["released"]) / 1e3 for r in mergers)],
            "end": max(us(r["merged"]) for r in st)})
    return out


def main(out_path: str) -> None:
    build()
    import torch
    sys.path.insert(0, "scripts")
    sys.path.insert(0, "build/v31")
    import ukr_fused_v2, ukr_fused_v2_stamped, ukr_library_stamped  # noqa: E401
    from ab_probe import check_and_time, unified_variant
    from pagedattn import reference, workloads
    from pagedattn.bench import _input_sets
    from pagedattn.ops import unified_keys_rows
    from pagedattn.profiles.tables import previous_profiles
    from pagedattn.tune import case_shape_key

    rows = []
    for label in ("B=1 q=1 kv=131072 16q/1kv d256 fp8", "B=1 q=4 kv=131072 16q/1kv d256 fp8"):
        case = next(c for c in workloads.get_workload("long-request").cases if c.label == label)
        prof = previous_profiles(case_shape_key(case), "NVIDIA_H200")[0]
        sets = _input_sets(case, "cuda")
        programs = prof.num_splits  # one sequence, one KV head, one query block
        row = {"case": label, "profile": prof.short()}
        for name, mod, fused in (("library", ukr_library_stamped, False), ("fused-v2", ukr_fused_v2_stamped, True)):
            mod.STAMPS = torch.zeros(programs, 8, dtype=torch.int64, device="cuda")
            launches = []
            for i in range(40):
                out = torch.empty_like(sets[i % len(sets)].kwargs["q"])
                unified_variant(mod.launch_unified_keys_rows, prof)(sets[i % len(sets)].kwargs, out)
                torch.cuda.synchronize()
                if i >= 8:
                    launches.append(summarize(mod.STAMPS[:, :7].tolist(), fused))
            row[f"raw_ns_{name}"] = mod.STAMPS[:, :7].tolist()
            row[f"median_{name}"] = {k: median([l[k] for l in launches]) if not isinstance(launches[0][k], list) else
                                     [median([l[k][j] for l in launches]) for j in range(len(launches[0][k]))]
                                     for k in launches[0]}
        variants = {"library": unified_variant(unified_keys_rows.launch_unified_keys_rows, prof),
                    "fused-v2": unified_variant(ukr_fused_v2.launch_unified_keys_rows, prof),
                    "library+stamps": unified_variant(ukr_library_stamped.launch_unified_keys_rows, prof),
                    "fused-v2+stamps": unified_variant(ukr_fused_v2_stamped.launch_unified_keys_rows, prof)}
        row.update(check_and_time(variants, sets, reference.unified_attention(**sets[0].kwargs), runs=5))
        print(json.dumps({k: v for k, v in row.items() if not k.startswith("raw_ns") and k != "ms_all"}), flush=True)
        rows.append(row)
        del sets
        torch.cuda.empty_cache()
    Path(out_path).write_text(json.dumps(rows))


if __name__ == "__main__":
    build() if sys.argv[1:] == ["--build"] else main(sys.argv[1])
