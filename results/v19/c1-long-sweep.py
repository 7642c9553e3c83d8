"""Time the FP8 long request (q=1, 131072 keys, 16q/1kv) at explicit keys-as-rows profiles, and two FP8 decode shapes."""
import json, sys
import pagedattn
from pagedattn import LaunchProfile, reference
from pagedattn.bench import _input_sets
from pagedattn.timing import time_calls
from pagedattn.workloads import Case, UnifiedShape, get_workload
cases = [c for c in get_workload("long-request").cases if "16q/1kv" in c.label and "q=1 " in c.label]
cases += [Case(f"decode B=64 q=1 kv={kv} 16q/1kv d256 fp8", UnifiedShape((1,) * 64, (kv,) * 64, 16, 1, 256, 16, kv_dtype="fp8")) for kv in (4096, 32768)]
profs = {cases[0].label: ["m16/n128/s128/w8/st2/keysrows"] + [f"m16/n64/s{s}/w4/st{st}/keysrows" for st in (2, 3) for s in (128, 192, 256, 264, 384, 396)],
         cases[1].label: ["m16/n128/s2/w8/st2/keysrows"] + [f"m16/n64/s{s}/w4/st{st}/keysrows" for st in (2, 3) for s in (1, 2, 3, 4, 6)],
         cases[2].label: ["m16/n128/s2/w8/st2/keysrows", "m16/n128/s1/w8/st2/keysrows"] + [f"m16/n64/s{s}/w4/st{st}/keysrows" for st in (2, 3) for s in (1, 2, 3, 4, 6)]}
with open(sys.argv[1], "w") as f:
    for case in cases:
        sets = _input_sets(case, "cuda")
        expected = reference.unified_attention(**sets[0].kwargs)
        for short in profs[case.label]:
            p = LaunchProfile.from_short(short)
            out = pagedattn.unified_attention(**sets[0].kwargs, profile=p)
            ms = time_calls([lambda k=s.kwargs: pagedattn.unified_attention(**k, profile=p) for s in sets])
            row = {"case": case.label, "profile": short, "ms": ms, "tbps": sets[0].bytes_moved / ms / 1e9,
                   "rel_l2": reference.rel_l2(out, expected)}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
