"""v35 call 1: which Triton-kernel profile a call of 17-32 packed query rows at head size 128 should get on sm90
without a table. The rules stop at 16 rows (decode and verify at head size 128: n128/st2), so verify of 5-8 draft
tokens at a group of 4, or of 3-4 at a group of 8, and every mixed batch's short launch (its key has 8 queries:
32 rows at a group of 4) take the analytic default m32/n64/w4/st3 (perf-notes v34 item 4: without the page-table
read-ahead, which the tuned short launch has).
Part 1, verify calls (32q/8kv q=8 B=64 at 4,096 keys and B=16 at 16,384; 32q/4kv q=4 B=32 at 8,192): each form at
the wave rule's split count for its own program slots (`select.with_splits`), as the rules would run it.
Part 2, a mixed batch's short launch alone (`tune.short_part_launch`, only its sequences' rows checked): the
bench's mixed batch (48 decodes + 16 verifies of 4), 64 decodes, 24 verifies of 8, each beside the bench's four
chunks; each form at its wave-rule split, then cut as the dispatcher cuts an untuned short launch
(`select.segmented_short`). BF16 and FP8 pages. "dispatch" is what the library runs today (the table's choice
where the H200 table has the bucket). NaN-prefilled outputs against float64, alternated graph timing over the
bench's rotated input sets, min of 3 rounds.
Usage: rows32_ab.py OUT.jsonl [--tiny]   (--tiny: small shapes under the interpreter, a CPU check of the script)"""
import json
import sys

sys.path.insert(0, "scripts")
from ab_probe import checked_and_timed  # noqa: E402
import torch  # noqa: E402
from pagedattn import api, tune  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.device import DeviceInfo  # noqa: E402
from pagedattn.profiles import select  # noqa: E402
from pagedattn.profiles.types import VERIFY_MAX_QUERIES, LaunchProfile  # noqa: E402
from pagedattn.workloads import Case, UnifiedShape  # noqa: E402

FORMS = ("m32/n64/s1/w4/st3", "m32/n64/s1/w4/st3/ahead", "m32/n128/s1/w4/st2", "m32/n128/s1/w4/st3/ahead",
         "m32/n128/s1/w8/st2", "m16/n64/s1/w4/st3/ahead", "m16/n128/s1/w4/st2", "m16/n128/s1/w4/st3")
CHUNKS = [(1024, 4096), (1024, 8192), (512, 16384), (2048, 2048)]
SHORT = {
    "48 decodes + 16 verifies of 4": [(1, 1024 + 640 * i) for i in range(48)] + [(4, 2048 + 1792 * i) for i in range(16)],
    "64 decodes": [(1, 1024 + 640 * i) for i in range(64)],
    "24 verifies of 8": [(8, 2048 + 1792 * i) for i in range(24)],
}
TINY = "--tiny" in sys.argv
DEV = "cpu" if TINY else "cuda"


def cases():
    if TINY:
        yield "verify", Case("tiny verify q=8 8q/2kv d64", UnifiedShape((8,) * 3, (70,) * 3, 8, 2, 64, kv_dtype="bf16"))
        yield "short", Case("tiny mixed", UnifiedShape((40, 1, 4, 8), (60, 50, 30, 90), 8, 2, 64, kv_dtype="fp8"))
        return
    for kv_dtype in ("bf16", "fp8"):
        for batch, q, kv, hkv in ((64, 8, 4096, 8), (16, 8, 16384, 8), (32, 4, 8192, 4)):
            shape = UnifiedShape((q,) * batch, (kv,) * batch, 32, hkv, 128, kv_dtype=kv_dtype)
            yield "verify", Case(f"B={batch} q={q} kv={kv} 32q/{hkv}kv d128 {kv_dtype}", shape)
        for label, short in SHORT.items():
            seqs = CHUNKS + short
            shape = UnifiedShape(tuple(n for n, _ in seqs), tuple(k for _, k in seqs), 32, 8, 128, kv_dtype=kv_dtype)
            yield "short", Case(f"chunks + {label} 32q/8kv d128 {kv_dtype}", shape)


def short_rows(shape) -> torch.Tensor:
    """The output rows of `shape`'s sequences of at most VERIFY_MAX_QUERIES queries (a short launch's)."""
    return torch.repeat_interleave(torch.tensor([n <= VERIFY_MAX_QUERIES for n in shape.query_lens]),
                                   torch.tensor(shape.query_lens)).to(DEV)


def plan_call(profile):
    plan = (select.PlannedLaunch(select.Selection(profile, "explicit")),)
    return lambda kw, out: api.launch_unified_plan(plan, out=out, **kw)


def main(case_list, forms, out_path):
    """Time `forms` (and the dispatcher's choice) on each (part, case) of `case_list`, rows to `out_path`."""
    device = DeviceInfo.current()
    with open(out_path, "w") as f:
        for part, case in case_list:
            sets = _input_sets(case, DEV)
            kw0 = sets[0].kwargs
            key = api.unified_shape_key(kw0["q"], kw0["k_cache"], kw0["block_table"], kw0["max_seqlen_q"],
                                        kw0["max_seqlen_k"])
            rows = None
            if part == "verify":
                profiles = {form: select.with_splits(LaunchProfile.from_short(form), key, device) for form in forms}
                profiles["dispatch"] = select.select_profile(key, device).profile
                variants = {name: plan_call(p) for name, p in profiles.items()}
            else:
                key = select.short_part_key(key)
                profiles = {form: select.segmented_short(select.Selection(select.with_splits(
                    LaunchProfile.from_short(form), key, device), "rules"), key).profile for form in forms}
                profiles["dispatch"] = select.short_selection(key, device).profile
                variants = {name: (lambda kw, out, p=p: tune.short_part_launch(p, out, **kw)) for name, p in profiles.items()}
                rows = short_rows(case.shape)
            checks, ms, times = checked_and_timed(case.label, variants, sets, rows, 1 if TINY else 3)
            best = min(ms, key=ms.get)
            row = {"part": part, "case": case.label, "key": key.bucket(), "profiles": {n: p.short() for n, p in profiles.items()},
                   "ms": ms, "ms_all": times, "checks": checks, "best": best,
                   "vs_best": {n: t / ms[best] for n, t in ms.items()}}
            print(json.dumps({k: row[k] for k in ("case", "best", "profiles", "vs_best")}), flush=True)
            f.write(json.dumps(row) + "\n")
            del sets
            if DEV == "cuda":
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main(cases(), FORMS, sys.argv[1])
