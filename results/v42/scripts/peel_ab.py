"""v42 call 1: build/v42's probes of the warpgroup-MMA kernel (make_variants.py: base, bias, peel) timed against each
other with the profiles the table of the GPU holds for each bucket (current or previous: the working tree's kernel
makes the H200's unified entries stale, so the dispatcher would take the rules there), else the rules' (an H100):
every BF16 MTP verify case of the bench (wgmma kernel) and FP8 verify of 2,048 keys (the FP8 form of the same kernel,
the rules' profile); `ab_probe.time_unified_case`: NaN-prefilled outputs checked against float64, alternated graph
timing, min of 7 rounds. Then each variant replayed back to back for 3 s on BF16 MTP 16q/1kv 32,768 keys
(`ab_probe.sustained`), beside the caller's 100 ms nvidia-smi log of SM clock and board power: the energy per call.
Usage: peel_ab.py OUT.jsonl SUSTAINED.jsonl"""
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
from pagedattn.profiles import select, tables  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402

VARIANTS = ("base", "bias", "peel")
FP8_SHORT = workloads.Case("B=20 q=4 kv=2048 16q/1kv d256 fp8", workloads.UnifiedShape((4,) * 20, (2048,) * 20, 16, 1,
                                                                                      256, kv_dtype="fp8"))


def variants(profile) -> dict:
    return {v: unified_variant(importlib.import_module(f"vw_{v}").launch_verify_wgmma, profile) for v in VARIANTS}


def chosen_profile(case):
    key, device = case_shape_key(case), DeviceInfo.current()
    tuned = [p for p in tables.previous_profiles(key, device.name) if p.warpgroup_mma]
    profile = tuned[0] if tuned else select.select_profile(key, device).profile
    assert profile.warpgroup_mma, (case.label, profile)
    print(case.label, "table" if tuned else "rules", profile.short(), flush=True)
    return profile


if __name__ == "__main__":
    cases = [c for c in workloads.get_workload("mtp-verify").cases if c.label.endswith("bf16")] + [FP8_SHORT]
    with open(sys.argv[1], "w") as f:
        for case in cases:
            time_unified_case(case, variants(chosen_profile(case)), f, runs=7)
    case = next(c for c in cases if "kv=32768 16q/1kv" in c.label)
    sets = _input_sets(case, "cuda")
    out = torch.empty_like(sets[0].kwargs["q"])
    with open(sys.argv[2], "w") as f:
        for name, fn in variants(chosen_profile(case)).items():
            start, end, rate = sustained(functools.partial(fn, sets[0].kwargs, out), seconds=3.0)
            row = {"variant": name, "start": start, "end": end, "ms_sustained": 1e3 / rate}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
