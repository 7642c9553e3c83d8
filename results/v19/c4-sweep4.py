"""Multi-block keys-as-rows: the FP8 long request at q=4 and MTP verify at q=8 at explicit profiles (session 27 call 4)."""
import json, sys
import pagedattn
from pagedattn import LaunchProfile, reference
from pagedattn.bench import _input_sets
from pagedattn.timing import time_calls
from pagedattn.workloads import Case, UnifiedShape, get_workload
long4 = next(c for c in get_workload("long-request").cases if c.label == "B=1 q=4 kv=131072 16q/1kv d256 fp8")
q8 = [Case(f"mtp B=20 q=8 kv={kv} 16q/1kv d256 fp8", UnifiedShape((8,) * 20, (kv,) * 20, 16, 1, 256, 16, kv_dtype="fp8")) for kv in (8192, 32768)]
profs = {long4.label: ["m64/n128/s128/w8/st2/keysrows", "m32/n128/s64/w8/st2/keysrows", "m32/n128/s66/w8/st2/keysrows",
                       "m32/n64/s128/w4/st2/keysrows", "m32/n64/s132/w4/st2/keysrows", "m32/n64/s96/w4/st2/keysrows",
                       "m32/n64/s128/w4/st3/keysrows", "m16/n64/s99/w4/st2/keysrows", "m16/n64/s64/w4/st2/keysrows"]}
for c in q8:
    profs[c.label] = [None, "m64/n128/s3/w8/st2/keysrows", "m64/n128/s6/w8/st2/keysrows", "m32/n64/s3/w4/st2/keysrows",
                      "m32/n64/s6/w4/st2/keysrows", "m16/n64/s2/w4/st2/keysrows"]
with open(sys.argv[1], "w") as f:
    for case in [long4] + q8:
        sets = _input_sets(case, "cuda")
        expected = reference.unified_attention(**sets[0].kwargs)
        for short in profs[case.label]:
            p = LaunchProfile.from_short(short) if short else pagedattn.api.choose_unified_profile(
                sets[0].kwargs["q"], sets[0].kwargs["k_cache"], sets[0].kwargs["block_table"], 8).profile
            out = pagedattn.unified_attention(**sets[0].kwargs, profile=p)
            ms = time_calls([lambda k=s.kwargs: pagedattn.unified_attention(**k, profile=p) for s in sets])
            row = {"case": case.label, "profile": p.short(), "ms": ms, "tbps": sets[0].bytes_moved / ms / 1e9,
                   "rel_l2": reference.rel_l2(out, expected)}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
