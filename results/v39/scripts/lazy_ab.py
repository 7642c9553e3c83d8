"""v39 call 1: build/v39's probes of the warpgroup-MMA kernel (make_variants.py: base, order, lazy) timed against each
other with the profiles the library's dispatcher picks on the H200 (its table where a bucket matches, else the rules):
every BF16 MTP verify case of the bench (wgmma kernel) and FP8 verify of 2,048 keys (the FP8 form of the same kernel,
the rules' profile); `ab_probe.time_unified_case`: NaN-prefilled outputs checked against float64, alternated graph
timing, min of 7 rounds. Then each variant replayed back to back for 3 s on BF16 MTP 16q/1kv 32,768 keys
(`ab_probe.sustained`), beside the caller's 100 ms nvidia-smi log of SM clock and board power: the energy per call.
Usage: lazy_ab.py OUT.jsonl SUSTAINED.jsonl"""
import functools
import importlib
import json
import sys

sys.path.insert(0, "scripts")
from ab_probe import sustained, time_unified_case, unified_variant  # noqa: E402
import torch  # noqa: E402
from pagedattn import workloads  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.device import DeviceInfo  # noqa: E402
from pagedattn.profiles import select  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402

FP8_SHORT = workloads.Case("B=20 q=4 kv=2048 16q/1kv d256 fp8", workloads.UnifiedShape((4,) * 20, (2048,) * 20, 16, 1,
                                                                                      256, kv_dtype="fp8"))


def variants(names, profile) -> dict:
    return {v: unified_variant(importlib.import_module(f"vw_{v}").launch_verify_wgmma, profile) for v in names}


def chosen_profile(case):
    chosen = select.select_profile(case_shape_key(case), DeviceInfo.current())
    assert chosen.profile.warpgroup_mma, (case.label, chosen)
    print(case.label, chosen.source, chosen.profile.short(), flush=True)
    return chosen.profile


def run(names, choose, ab_path: str, sustained_path: str) -> None:
    """The A/B of the `vw_{name}` kernel files over the cases and the sustained replays, each case at
    choose(case)'s profile."""
    cases = [c for c in workloads.get_workload("mtp-verify").cases if c.label.endswith("bf16")] + [FP8_SHORT]
    with open(ab_path, "w") as f:
        for case in cases:
            time_unified_case(case, variants(names, choose(case)), f, runs=7)
    case = next(c for c in cases if "kv=32768 16q/1kv" in c.label)
    sets = _input_sets(case, "cuda")
    out = torch.empty_like(sets[0].kwargs["q"])
    with open(sustained_path, "w") as f:
        for name, fn in variants(names, choose(case)).items():
            start, end, rate = sustained(functools.partial(fn, sets[0].kwargs, out), seconds=3.0)
            row = {"variant": name, "start": start, "end": end, "ms_sustained": 1e3 / rate}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    run(("base", "order", "lazy"), chosen_profile, sys.argv[1], sys.argv[2])
