"""v42 call 1: build/v42's probes of the warpgroup-MMA kernel (make_variants.py: base, bias, peel) timed against each
other with the profiles the table of the GPU holds for each bucket (current or previous: the working tree's kernel
makes the H200's unified entries stale, so the dispatcher would take the rules there), else the rules' (an H100):
every BF16 MTP verify case of the bench (wgmma kernel) and FP8 verify of 2,048 keys (the FP8 form of the same kernel,
the rules' profile); `ab_probe.time_unified_case`: NaN-prefilled outputs checked against float64, alternated graph
timing, min of 7 rounds. Then each variant replayed back to back for 3 s on BF16 MTP 16q/1kv 32,768 keys
(`ab_probe.sustained`), beside the caller's 100 ms nvidia-smi log of SM clock and board power: the energy per call.
v39's `lazy_ab.run` with these variants and this choice of profile.
Usage: peel_ab.py OUT.jsonl SUSTAINED.jsonl"""
import sys

sys.path.insert(0, "results/v39/scripts")
from lazy_ab import run  # noqa: E402
from pagedattn.device import DeviceInfo  # noqa: E402
from pagedattn.profiles import select, tables  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402


def chosen_profile(case):
    key, device = case_shape_key(case), DeviceInfo.current()
    tuned = [p for p in tables.previous_profiles(key, device.name) if p.warpgroup_mma]
    profile = tuned[0] if tuned else select.select_profile(key, device).profile
    assert profile.warpgroup_mma, (case.label, profile)
    print(case.label, "table" if tuned else "rules", profile.short(), flush=True)
    return profile


if __name__ == "__main__":
    run(("base", "bias", "peel"), chosen_profile, sys.argv[1], sys.argv[2])
