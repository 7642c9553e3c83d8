"""v34 call 1: the unified keys-as-rows kernel with V waited for late (build/v34/ukr_late_v.py, from make_variants.py;
extra_k 0: the same rings, 1: K's ring a tile deeper) against the library's, same profiles (the H200 table's,
`profiles.tables.previous_profiles`), on the bench cases that run this kernel: the FP8 long request at q=1 and q=4
and FP8 MTP verify. NaN-prefilled outputs checked against float64, alternated graph timing, min of 7 rounds
(`ab_probe.check_and_time`). `keys_rows_ab` is shared with dealt_ab.py (call 2).
Usage: late_v_ab.py OUT.jsonl"""
import functools
import json
import sys

sys.path.insert(0, "scripts")
from ab_probe import check_and_time, unified_variant  # noqa: E402
import torch  # noqa: E402
from pagedattn import reference, workloads  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.ops import unified_keys_rows as library  # noqa: E402
from pagedattn.profiles.tables import previous_profiles  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402

CASES = ("q=1 kv=131072 16q/1kv d256 fp8", "q=4 kv=131072 16q/1kv d256 fp8", "kv=32768 16q/1kv d256 fp8",
         "kv=32768 32q/2kv d256 fp8", "kv=70000 16q/1kv d256 fp8")


def keys_rows_ab(path: str, probes: dict, runs: int = 7) -> None:
    """The library's keys-as-rows launcher and `probes` (name -> a launcher with its signature) on CASES, each
    with the bucket's table profile; one JSON line per case to `path`, also printed without the per-round times."""
    with open(path, "w") as f:
        for name in ("long-request", "mtp-verify"):
            for case in workloads.get_workload(name).cases:
                if any(label in case.label for label in CASES):
                    profile = previous_profiles(case_shape_key(case), "NVIDIA_H200")[0]
                    sets = _input_sets(case, "cuda")
                    variants = {"library": unified_variant(library.launch_unified_keys_rows, profile)}
                    variants.update({k: unified_variant(launch, profile) for k, launch in probes.items()})
                    expected = reference.unified_attention(**sets[0].kwargs)
                    row = {"case": case.label, "profile": profile.short(), "bytes": sets[0].bytes_moved,
                           **check_and_time(variants, sets, expected, runs=runs)}
                    row["ratio"] = {k: v / row["ms"]["library"] for k, v in row["ms"].items()}
                    print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
                    f.write(json.dumps(row) + "\n")
                    del sets
                    torch.cuda.empty_cache()


if __name__ == "__main__":
    import ukr_late_v
    keys_rows_ab(sys.argv[1], {f"late_v_k{extra}": functools.partial(ukr_late_v.launch_unified_keys_rows,
                                                                     extra_k=extra) for extra in (0, 1)})
