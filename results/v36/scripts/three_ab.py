"""v36 call 1: a mixed batch's short sequences in two launches by query count (`select.short_launches`: those a
16-row block holds on its profile, the rest of the sequences of at most 8 queries on the verify rules' blocks)
against v35's one short launch on the short profile, as whole calls (the chunks' launch too), with the H200 table
("dispatch": the plans `select.partitioned_plan` makes) and without it (`select.untuned_launch_plan`). v35's plan
is v36's with the two short launches joined into the first's profile over every sequence of at most 8 queries
(its selection is unchanged). Contents beside the bench's four chunks: 48 decodes + 16 verifies of 4 (the bench's
mix), 64 decodes, 24 verifies of 8, 32 decodes + 16 verifies of 8; and a small call (one 512-query chunk + 16
decodes over 1,024-4,096 keys) where the extra launch's cost shows. 32q/8kv (group 4) and 32q/4kv (group 8), D=128,
BF16 and FP8 pages. NaN-prefilled outputs against float64 (every row), alternated graph timing over the bench's
rotated inputs, min of 3 rounds.
Call 2 (--group8) runs the group-8 cases alone, after the short launch's range became the sequences that 2 of its
blocks hold (`select.SHORT_BLOCKS_PER_SEQUENCE`; call 1 ran the second launch over those one block holds).
Usage: three_ab.py OUT.jsonl [--tiny] [--group8]   (--tiny: a small shape under the interpreter with the H200's plans, a CPU check
of the script)"""
import json
import sys

sys.path.insert(0, "scripts")
from ab_probe import checked_and_timed  # noqa: E402
import torch  # noqa: E402
from pagedattn import api  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.device import KNOWN_DEVICES, DeviceInfo  # noqa: E402
from pagedattn.profiles import select  # noqa: E402
from pagedattn.profiles.types import VERIFY_MAX_QUERIES  # noqa: E402
from pagedattn.workloads import Case, UnifiedShape  # noqa: E402

CHUNKS = [(1024, 4096), (1024, 8192), (512, 16384), (2048, 2048)]
DECODES = [(1, 1024 + 640 * i) for i in range(64)]
VERIFY4 = [(4, 2048 + 1792 * i) for i in range(16)]
VERIFY8 = [(8, 2048 + 1792 * i) for i in range(24)]
CONTENTS = {
    "48 decodes + 16 verifies of 4": CHUNKS + DECODES[:48] + VERIFY4,
    "64 decodes": CHUNKS + DECODES,
    "24 verifies of 8": CHUNKS + VERIFY8,
    "32 decodes + 16 verifies of 8": CHUNKS + DECODES[:32] + VERIFY8[:16],
    "small: a 512-query chunk + 16 decodes": [(512, 2048)] + [(1, 1024 + 192 * i) for i in range(16)],
}
TINY = "--tiny" in sys.argv
GROUP8 = "--group8" in sys.argv
DEV = "cpu" if TINY else "cuda"


def cases():
    if TINY:
        yield Case("tiny 16q/2kv", UnifiedShape((40, 1, 2, 8, 1, 5), (60, 50, 30, 90, 20, 40), 16, 2, 64, kv_dtype="fp8"))
        return
    for hkv in (4,) if GROUP8 else (8, 4):
        for kv_dtype in ("bf16", "fp8"):
            for label, seqs in CONTENTS.items():
                shape = UnifiedShape(tuple(n for n, _ in seqs), tuple(k for _, k in seqs), 32, hkv, 128,
                                     kv_dtype=kv_dtype)
                yield Case(f"{label} 32q/{hkv}kv d128 {kv_dtype}", shape)


def joined(plan):
    """v35's plan: the short launches of `plan` as one launch of the first's selection over q <= 8."""
    if len(plan) < 3:
        return plan
    return plan[:1] + (select.PlannedLaunch(plan[1].selection, queries_upto=VERIFY_MAX_QUERIES),)


def described(plan):
    return " + ".join(f"{p.selection.profile.short()} ({p.queries_above}<q<={min(p.queries_upto, 99999)})"
                      for p in plan)


def main(out_path):
    device = KNOWN_DEVICES["NVIDIA_H200"] if TINY else DeviceInfo.current()  # --tiny: the H200's plans
    with open(out_path, "w") as f:
        for case in cases():
            sets = _input_sets(case, DEV)
            kw0 = sets[0].kwargs
            key = api.unified_shape_key(kw0["q"], kw0["k_cache"], kw0["block_table"], kw0["max_seqlen_q"],
                                        kw0["max_seqlen_k"])
            dispatch = select.unified_launch_plan(key, device)
            untuned = select.untuned_launch_plan(key, device)
            plans = {"v35 dispatch": joined(dispatch), "v36 dispatch": dispatch}
            if untuned != dispatch:
                plans |= {"v35 untuned": joined(untuned), "v36 untuned": untuned}
            variants = {name: (lambda kw, out, p=p: api.launch_unified_plan(p, out=out, **kw)) for name, p in plans.items()}
            checks, ms, times = checked_and_timed(case.label, variants, sets, None, 1 if TINY else 3)
            row = {"case": case.label, "plans": {n: described(p) for n, p in plans.items()}, "ms": ms,
                   "ms_all": times, "checks": checks,
                   "ratios": {kind: ms[f"v36 {kind}"] / ms[f"v35 {kind}"] for kind in ("dispatch", "untuned")
                              if f"v36 {kind}" in ms}}
            print(json.dumps({k: row[k] for k in ("case", "plans", "ms", "ratios")}), flush=True)
            f.write(json.dumps(row) + "\n")
            del sets
            if DEV == "cuda":
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1])
