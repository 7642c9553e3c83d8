"""v30 call 1: the split merge dropping its partials' L2 lines after reading them (`discard.global.L2`,
ops/common.py's DISCARD), against the merge that leaves them dirty in L2 to be written back to HBM later.
Each bench case runs `api.unified_attention` with the H200 table's profile for its bucket
(`profiles.tables.previous_profiles`: the edit of ops/common.py makes the table stale); a variant replaces `launch_merge` in the unified ops modules by a launcher
with its own column slice, split chunk, warps and DISCARD. Each variant is checked once on a NaN-prefilled
output against the float64 reference, then the variants are timed alternately (graph timing over the bench's
rotated input sets, ROUNDS rounds: `ab_probe.check_and_time`). With --power, BF16 and FP8 MTP at 32,768 keys are then replayed for ~2 s
per variant beside the caller's 100 ms nvidia-smi log (`ab_probe.sustained`).
Call 2 (--library) times v29's merge against the library's (`common.launch_merge`: `merge_shape`, whole-line
slices, DISCARD) and the library's shape without DISCARD.
Call 4 (--shapes) times the library's merge against other whole-line launch shapes on three cases.
The calls ran an inline copy of `check_and_time` (pre-allocated outputs, the same checks, rounds and
graph timing); the session's review replaced it by the helper.
Usage: merge_discard_ab.py OUT.jsonl [--power] [--library | --shapes]"""
import functools, json, statistics, sys
import torch
import triton
sys.path.insert(0, "scripts")
from ab_probe import check_and_time, sustained  # noqa: E402
from pagedattn import api, reference, workloads  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.ops import common, unified, unified_keys_rows, verify_wgmma  # noqa: E402
from pagedattn.profiles.tables import previous_profiles  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402

ROUNDS = 5
CASES = {"mtp-verify": ("kv=32768 16q/1kv d256 bf16", "kv=70000 16q/1kv d256 bf16", "kv=32768 16q/1kv d256 fp8",
                        "kv=70000 16q/1kv d256 fp8", "kv=32768 32q/2kv d256 fp8"),
         "long-request": ("q=1 kv=131072 16q/1kv d256 fp8", "q=4 kv=131072 16q/1kv d256 fp8",
                          "q=1 kv=131072 32q/8kv d128 bf16")}  # the GQA buckets take one split: no merge
POWER = ("kv=32768 16q/1kv d256 bf16", "kv=32768 16q/1kv d256 fp8")


def merge_launcher(discard, min_columns=16, values=4096, warps=2):
    """v29's rule for the merge's shape (its constants the defaults), with other constants and DISCARD."""
    def launch(part, lse, out):
        splits, head_pad = part.shape[0], part.shape[3]
        columns = min(head_pad, max(min_columns, values // triton.next_power_of_2(splits)))
        common.launch_merge_shaped(part, lse, out, columns, min(triton.next_power_of_2(splits), values // columns),
                                   warps, discard)
    return launch


def library_shape_launcher(discard):
    """`common.merge_shape`'s launch shape (v30), with DISCARD as asked."""
    def launch(part, lse, out):
        common.launch_merge_shaped(part, lse, out, *common.merge_shape(part.shape[0], part.shape[3]), discard)
    return launch


# call 1: v29's merge keeping or dropping its lines; past 128 splits also whole-line slices in 2 chunks or 1
VARIANTS = {"keep": merge_launcher(False), "discard": merge_launcher(True)}
WIDE = {"keep-c32": merge_launcher(False, 32), "discard-c32": merge_launcher(True, 32),
        "discard-c32-w4": merge_launcher(True, 32, 8192, 4)}
# call 2 (--library): v29's merge against the library's, and the library's shape without the discard
LIBRARY = {"v29": merge_launcher(False), "library": common.launch_merge,
           "library-keep": library_shape_launcher(False)}

# call 4 (--shapes): the library's merge against other whole-line shapes (columns, chunk, warps), all dropping lines
SHAPES = {"q=1 kv=131072 16q/1kv d256 fp8": ((32, 256, 8), (64, 256, 8), (64, 128, 4)),
          "q=4 kv=131072 16q/1kv d256 fp8": ((32, 128, 4), (64, 128, 4), (64, 64, 2)),
          "kv=32768 16q/1kv d256 bf16": ((128, 16, 2), (64, 16, 1), (256, 16, 4))}


def shape_launcher(columns, chunk, warps):
    def launch(part, lse, out):
        common.launch_merge_shaped(part, lse, out, columns, chunk, warps, True)
    return launch


def table_profile(case):
    """The H200 table's profile of the case's bucket."""
    return previous_profiles(case_shape_key(case), "NVIDIA_H200")[0]


def merge_variant(merge, profile):
    """An `ab_probe` variant (kwargs, out) -> None: the unified call at `profile` with `merge` as its split merge."""
    def call(kw, out):
        for module in (unified, unified_keys_rows, verify_wgmma):
            module.launch_merge = merge
        api.unified_attention(**kw, out=out, profile=profile)
    return call


def main(path, power, library, shapes):
    with open(path, "w") as f:
        for name, labels in CASES.items():
            for case in workloads.get_workload(name).cases:
                if not any(label in case.label for label in labels):
                    continue
                profile = table_profile(case)
                if shapes:
                    found = [v for label, v in SHAPES.items() if label in case.label]
                    if not found:
                        continue
                    variants = {"library": common.launch_merge,
                                **{"c{}/k{}/w{}".format(*shape): shape_launcher(*shape) for shape in found[0]}}
                elif library:
                    variants = LIBRARY
                else:
                    variants = dict(VARIANTS, **(WIDE if profile.num_splits > 128 else {}))
                calls = {v: merge_variant(m, profile) for v, m in variants.items()}
                sets = _input_sets(case, "cuda")
                timed = check_and_time(calls, sets, reference.unified_attention(**sets[0].kwargs), runs=ROUNDS)
                row = {"case": case.label, "profile": profile.short(), "bytes": sets[0].bytes_moved,
                       "ms_min": timed["ms"],
                       "ms_median": {v: statistics.median(t) for v, t in timed["ms_all"].items()},
                       "ms_all": timed["ms_all"], "rel_l2_nan": timed["rel_l2_nan"]}
                print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
                f.write(json.dumps(row) + "\n")
                if power and any(label in case.label for label in POWER):
                    out = torch.empty_like(sets[0].kwargs["q"])
                    for _ in range(2):
                        for v in list(calls)[:2]:
                            start, end, rate = sustained(functools.partial(calls[v], sets[0].kwargs, out))
                            prow = {"case": case.label, "variant": v, "start": start, "end": end,
                                    "ms_sustained": 1e3 / rate}
                            print(json.dumps(prow), flush=True)
                            f.write(json.dumps(prow) + "\n")
                del sets
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1], "--power" in sys.argv, "--library" in sys.argv, "--shapes" in sys.argv)
