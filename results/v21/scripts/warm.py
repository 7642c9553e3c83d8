"""Compile one (case, profile) pair by running it once on the case's first input set."""
import sys
from pagedattn import LaunchProfile, unified_attention, workloads
name, part = sys.argv[1].split(":", 1)
profile = LaunchProfile.from_short(sys.argv[2])
for case in (c for c in workloads.get_workload(name).cases if part in c.label):
    kw = case.build("cuda", seed=0).kwargs
    try:
        unified_attention(**kw, profile=profile)
    except ValueError as exc:
        print(case.label, profile.short(), exc)
