"""v33 call 1: the mixed batch's short launch split (its partials and merge laid out by sequence,
perf-notes v33 item 1). On both mixed-batch bench cases (32q/8kv, D=128, BF16 and FP8 pages): the short
launch alone (`tune.short_part_launch`; only its sequences' rows checked, the others must stay NaN) and
the whole call in the table's launches with that short profile (`tune.planned_call`, the call's own
table profile for the chunks; every row checked), at 1-16 splits on the table's m16/n128/st3/ahead and
at 2-8 on 64-key tiles; then an empty split short launch (a 4 x 8,192 prefill: no short sequence) with
its merge, against the whole call. NaN-prefilled outputs against float64, graph timing over the bench's
rotated input sets, variants alternated, min of 3 rounds; the HBM read ceiling measured in the same run.
Usage: short_split_ab.py OUT.jsonl [--tiny]   (--tiny: the workload's tiny cases, small buffers: a CPU check)"""
import json
import sys

import torch

from pagedattn import api, reference, tune, workloads
from pagedattn.bench import _input_sets, measure_ceilings
from pagedattn.profiles import select
from pagedattn.profiles.types import VERIFY_MAX_QUERIES, LaunchProfile
from pagedattn.timing import time_calls
from pagedattn.workloads import UnifiedShape

CHUNKS = LaunchProfile.from_short("m128/n64/s1/w8/st3/ahead")  # the H200 table's chunk profile, both page types
SPLITS = {"m16/n128/s{}/w4/st3/ahead": (1, 2, 3, 4, 6, 8, 16), "m16/n64/s{}/w4/st3/ahead": (2, 4, 8)}


def short_rows(shape) -> torch.Tensor:
    return torch.repeat_interleave(torch.tensor([n <= VERIFY_MAX_QUERIES for n in shape.query_lens]),
                                   torch.tensor(shape.query_lens))


def short_bytes(shape) -> int:
    """K/V bytes of the short sequences + their q and out (bf16)."""
    kv_bytes = {"bf16": 2, "fp8": 1}[shape.kv_dtype]
    kv = sum(n for q, n in zip(shape.query_lens, shape.kv_lens) if q <= VERIFY_MAX_QUERIES)
    tokens = sum(q for q in shape.query_lens if q <= VERIFY_MAX_QUERIES)
    return kv * shape.num_kv_heads * shape.head_size * 2 * kv_bytes + 2 * tokens * shape.num_q_heads * shape.head_size * 2


TINY = "--tiny" in sys.argv
DEV = "cpu" if TINY else "cuda"
with open(sys.argv[1], "w") as f:
    ceil = measure_ceilings(DEV, (1 << 20) if TINY else (2 << 30), 64 if TINY else 8192)
    f.write(json.dumps({"ceilings": ceil}) + "\n")
    print("read ceiling", round(ceil["hbm_read_tbps"], 3), "TB/s", flush=True)
    wl = workloads.get_workload("mixed-batch")
    for case in wl.tiny if TINY else wl.cases:
        sets = _input_sets(case, DEV)
        kw0 = sets[0].kwargs
        key = api.unified_shape_key(kw0["q"], kw0["k_cache"], kw0["block_table"], kw0["max_seqlen_q"],
                                    kw0["max_seqlen_k"])
        mine = short_rows(case.shape).to(DEV)
        expected = reference.unified_attention(**kw0)
        variants = {}
        for form, counts in SPLITS.items():
            for s in counts:
                p = LaunchProfile.from_short(form.format(s))
                variants[f"short {p.short()}"] = (lambda kw, out, p=p: tune.short_part_launch(p, out, **kw), True)
                variants[f"call {p.short()}"] = (
                    lambda kw, out, p=p: tune.planned_call(key, select.Selection(p, "table"), CHUNKS, out, **kw), False)
        checks = {}
        for name, (fn, short_only) in variants.items():
            out = torch.full_like(kw0["q"], float("nan"))
            fn(kw0, out)
            rows = mine if short_only else torch.ones_like(mine)
            checks[name] = {"rel_l2": reference.rel_l2(out[rows], expected[rows]), "nan": bool(out[rows].isnan().any()),
                            "others_untouched": bool(out[~rows].isnan().all())}
        times = {name: [] for name in variants}
        for _ in range(3):
            for name, (fn, _) in variants.items():
                times[name].append(time_calls([lambda s=s, fn=fn, o=torch.empty_like(s.kwargs["q"]): fn(s.kwargs, o)
                                               for s in sets]))
        nbytes = short_bytes(case.shape)
        row = {"case": case.label, "chunks": CHUNKS.short(), "short_bytes": nbytes,
               "ms": {n: min(t) for n, t in times.items()}, "ms_all": times, "checks": checks,
               "short_pct_of_ceiling": {n: 100 * nbytes / (min(t) * 1e-3) / (ceil["hbm_read_tbps"] * 1e9)
                                        for n, t in times.items() if n.startswith("short")}}
        print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
        f.write(json.dumps(row) + "\n")
        del sets
        torch.cuda.empty_cache()
    n = 64 if TINY else 8192
    kw = UnifiedShape((n,) * 4, (n,) * 4, 32, 8, 128).build(DEV, seed=0).kwargs
    for s in (1, 4):
        p = LaunchProfile.from_short(f"m16/n128/s{s}/w4/st3/ahead")
        out = torch.full_like(kw["q"], float("nan"))
        ms = time_calls([lambda: tune.short_part_launch(p, out, **kw)])
        row = {"empty_short": p.short(), "ms": ms, "rows_untouched": bool(out.isnan().all()),
               "call_ms": time_calls([lambda: api.unified_attention(**kw, out=out)])}
        print(json.dumps(row), flush=True)
        f.write(json.dumps(row) + "\n")
