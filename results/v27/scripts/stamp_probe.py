"""v27: where a keys-as-rows program's time goes. Builds copies of a unified keys-as-rows kernel file
with %globaltimer stamps (build/v27/<name>_stamped.py) at the kernel's entry, before the KV loop (the
prologue: query-block bounds, q's read, the ring's first copies, q's conversion), after the first
tile's wait and barrier, after the loop's last `wait_group(0)`, after the row sums' reduction (call
2 on), and after the epilogue's stores were issued, with the program's SM, and launches each
eagerly (one launch, then a sync) cycling over the bench's rotated input sets, for the FP8 long
request (q=1, q=4) and one FP8 MTP case, with main's table profiles. Per launch: the span (last
end - first start), the spread of program starts and ends, and per program the prologue, the first
tile's wait, the time per later tile and the epilogue's two parts; medians over launches. The
stamps' cost is the stamped kernels' graph time against the unstamped ones'. Call 1 stamped the
tree (the vote); call 3 the tree (the epilogue's direct stores, "direct") and build/v27/ukr_vote.py
(call 1's file, "vote"); call 5 the tree alone, with three more stamps in the prologue: after the
query-block bounds were read (the empty-block exit needs them), after `_fill_ring` (the first
tiles' page-table entries read, their copies issued) and after `_e4m3_pair` (q read and split);
call 6 the tree alone, with four sums over the loop's steps besides: the ring's wait and barrier,
Q.K^T to its wait, the softmax to P^T's barrier, P.V to its last wait.
Usage: stamp_probe.py OUT.json [NAME ...] (default: every source), or --build"""
import json, re, statistics, sys
from pathlib import Path

SOURCES = {"direct": Path("pagedattn/ops/unified_keys_rows.py"), "vote": Path("build/v27/ukr_vote.py")}
FIELDS = ("start", "bounds", "ring", "split", "loop", "first", "drained", "sums", "end", "wait", "scores", "softmax",
          "pv", "smid", "tiles")

HELPERS = '''

STAMPS = None  # int64 [programs, 16], set by the probe


@gluon.jit
def _now(x):
    return gl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [x], dtype=gl.int64, is_pure=False, pack=1)


@gluon.jit
def _smid(x):
    return gl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [x], dtype=gl.int32, is_pure=False, pack=1)
'''

RECORD = "\n".join([
    "    t_end = _now(zero)",
    "    t_smid = _smid(zero).to(gl.int64)",
    "    t_tiles = (tile_hi - tile_lo) + zero.to(gl.int64)",
    "    lane = gl.arange(0, 32 * WARPS, layout=STAMP)",
    "    program = (gl.program_id(0) * gl.num_programs(1) + kv_head) * gl.num_programs(2) + split",
    "    value = t_" + FIELDS[-1],
    *[f"    value = gl.where(lane == {i}, t_{f}, value)" for i, f in enumerate(FIELDS[:-1])],
    "    gl.store(stamp_ptr + program.to(gl.int64) * 16 + lane, value, mask=lane < %d)" % len(FIELDS), ""])


def sub(pattern, repl, text):
    new, n = re.subn(pattern, repl, text, count=1, flags=re.M)
    assert n == 1, pattern
    return new


def build(name: str) -> None:
    s = SOURCES[name].read_text()
    s = re.sub(r"^from \.\.(\w+)", r"from pagedattn.\1", s, flags=re.M)
    s = re.sub(r"^from \.(\w+)", r"from pagedattn.ops.\1", s, flags=re.M)
    s = sub(r"^(CHUNK = .*)$", r"\1" + HELPERS.replace("\\", "\\\\"), s)
    s = sub(r"v_scale_value, q_blocks,\n", "v_scale_value, q_blocks, stamp_ptr,\n", s)
    s = sub(r"^(    WARPS: gl.constexpr = TILE_N // 16.*)$", r"\1\n    STAMP: gl.constexpr = gl.BlockedLayout([1], [32], [WARPS], [0])\n"
            r"    zero = gl.zeros([32 * WARPS], gl.int32, STAMP)\n    t_start = _now(zero)", s)
    s = sub(r"^(    context = kv_len - q_len.*)$", r"\1\n    t_bounds = _now(zero)", s)
    ring = s.index("\n", s.index("SAME_STRIDES, COPY)", s.index("    _fill_ring(")))
    s = s[:ring] + "\n    t_ring = _now(zero)" + s[ring:]
    s = sub(r"^(    q_hi, q_lo, down = _e4m3_pair.*)$", r"\1\n    t_split = _now(zero)", s)
    s = sub(r"^(    for t in range\(tile_lo, tile_hi\):)$", r"    t_loop = _now(zero)\n    t_first = t_loop\n"
            r"    t_wait = zero.to(gl.int64)\n    t_scores = t_wait\n    t_softmax = t_wait\n    t_pv = t_wait\n\1", s)
    # per loop step: the ring's wait and barrier, Q.K^T to its wait, the softmax to P^T's barrier (and a
    # rescale), P.V to its last wait, each summed over the program's tiles
    s = sub(r"^(        async_copy.wait_group\(STAGES - 2\))$", r"        step_a = _now(zero)\n\1", s)
    s = sub(r"^(        gl.thread_barrier\(\)  # tile t landed.*)$", r"\1\n        step_b = _now(zero)\n"
            r"        t_wait += step_b - step_a\n        t_first = gl.where(t == tile_lo, step_b, t_first)", s)
    s = sub(r"^(        s = warpgroup_mma_wait\(num_outstanding=0, deps=\(s,\)\))$", r"\1\n        step_c = _now(zero)\n"
            r"        t_scores += step_c - step_b", s)
    s = sub(r"^(        l_i = l_i \+ gl.sum.*)$", r"        step_d = _now(zero)\n        t_softmax += step_d - step_c\n\1", s)
    s = sub(r"^(            o_even, o_odd = warpgroup_mma_wait\(num_outstanding=0, deps=\(o_even, o_odd\)\))$",
            r"\1\n        t_pv += _now(zero) - step_d", s)
    s = sub(r"^(    async_copy.wait_group\(0\))$", r"\1\n    t_drained = _now(zero)", s)
    s = sub(r"^(    l_sum = .*)$", r"\1\n    t_sums = _now(zero)", s)
    end = s.index("\n\n\n", s.index("def unified_keys_rows_kernel("))  # the kernel's last line
    s = s[:end] + "\n\n" + RECORD + s[end:]
    s = sub(r"v_scale_v, q_blocks,\n", "v_scale_v, q_blocks, STAMPS,\n", s)
    Path(f"build/v27/{name}_stamped.py").write_text(s)


def median(xs):
    return statistics.median(xs) if xs else None


def summarize(st):
    """One launch's stamps (rows of FIELDS, ns) -> the span and per-program phase medians (us)."""
    st = [dict(zip(FIELDS, r)) for r in st if r[0] > 0]  # a segment past the keys exits before its stamps
    t0 = min(r["start"] for r in st)
    per_tile = [(r["drained"] - r["first"]) / (r["tiles"] - 1) for r in st if r["tiles"] > 1]
    starts = sorted((r["start"] - t0) / 1e3 for r in st)
    ends = sorted((r["end"] - t0) / 1e3 for r in st)

    def phase(a, b):
        return median([(r[b] - r[a]) / 1e3 for r in st])
    return {"span_us": ends[-1], "start_us_p50_max": [median(starts), starts[-1]],
            "end_us_min_p50_max": [ends[0], median(ends), ends[-1]],
            "prologue_us": phase("start", "loop"), "bounds_us": phase("start", "bounds"),
            "ring_us": phase("bounds", "ring"), "split_us": phase("ring", "split"), "smem_q_us": phase("split", "loop"),
            "first_tile_us": phase("loop", "first"), "per_later_tile_us": median(per_tile) / 1e3 if per_tile else None,
            "loop_after_first_us": phase("first", "drained"), "epilogue_us": phase("drained", "end"),
            "row_sums_us": phase("drained", "sums"), "rows_stored_us": phase("sums", "end"),
            **{f"{f}_per_tile_us": median([r[f] / r["tiles"] / 1e3 for r in st]) for f in ("wait", "scores", "softmax", "pv")},
            "programs_per_sm_max": max(sum(1 for r in st if r["smid"] == sm) for sm in {r["smid"] for r in st}),
            "sms": len({r["smid"] for r in st})}


def main(out_path: str, names: list) -> None:
    for name in names:
        build(name)
    import importlib
    import torch
    sys.path.insert(0, "scripts")
    sys.path.insert(0, "build/v27")
    from ab_probe import check_and_time, unified_variant
    from pagedattn import reference, workloads
    from pagedattn.bench import _input_sets
    from pagedattn.profiles.types import LaunchProfile

    plain = {name: importlib.import_module(module) for name, module in
             (("direct", "pagedattn.ops.unified_keys_rows"), ("vote", "ukr_vote")) if name in names}
    stamped = {name: importlib.import_module(f"{name}_stamped") for name in names}
    cases = [("long-request", "B=1 q=1 kv=131072 16q/1kv d256 fp8", "m16/n64/s256/w4/st2/keysrows"),
             ("long-request", "B=1 q=4 kv=131072 16q/1kv d256 fp8", "m64/n128/s128/w8/st2/keysrows"),
             ("mtp-verify", "B=20 q=4 kv=32768 16q/1kv d256 fp8", "m64/n128/s6/w8/st2/keysrows")]
    rows = []
    for wl, label, short in cases:
        case = next(c for c in workloads.get_workload(wl).cases if c.label == label)
        prof = LaunchProfile.from_short(short)
        sets = _input_sets(case, "cuda")
        kw0 = sets[0].kwargs
        programs = kw0["seq_lens"].shape[0] * prof.query_blocks(case.shape.num_q_heads // case.shape.num_kv_heads,
                                                                 kw0["max_seqlen_q"]) * case.shape.num_kv_heads * prof.num_splits
        row = {"case": label, "profile": short, "programs": programs, "bytes": sets[0].bytes_moved}
        for name, mod in stamped.items():
            mod.STAMPS = torch.zeros(programs, 16, dtype=torch.int64, device="cuda")
            launches = []
            for i in range(40):
                out = torch.empty_like(sets[i % len(sets)].kwargs["q"])
                unified_variant(mod.launch_unified_keys_rows, prof)(sets[i % len(sets)].kwargs, out)
                torch.cuda.synchronize()
                if i >= 8:
                    launches.append(summarize(mod.STAMPS[:, :len(FIELDS)].tolist()))
            row[f"raw_ns_{name}"] = mod.STAMPS[:, :len(FIELDS)].tolist()
            row[f"median_{name}"] = {k: median([l[k] for l in launches]) if not isinstance(launches[0][k], list) else
                                     [median([l[k][j] for l in launches]) for j in range(len(launches[0][k]))]
                                     for k in launches[0]}
        variants = {name: unified_variant(mod.launch_unified_keys_rows, prof) for name, mod in plain.items()}
        variants.update({f"{name}+stamps": unified_variant(mod.launch_unified_keys_rows, prof) for name, mod in stamped.items()})
        row.update(check_and_time(variants, sets, reference.unified_attention(**kw0)))
        print(json.dumps({k: v for k, v in row.items() if not k.startswith("raw_ns") and k != "ms_all"}), flush=True)
        rows.append(row)
        del sets
        torch.cuda.empty_cache()
    Path(out_path).write_text(json.dumps(rows))


if __name__ == "__main__":
    [build(name) for name in SOURCES] if sys.argv[1:] == ["--build"] else main(sys.argv[1], sys.argv[2:] or list(SOURCES))
