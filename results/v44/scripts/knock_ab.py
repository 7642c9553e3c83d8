"""v44: where a keys-as-rows step's time goes, by knock-outs (build/v44, make_variants.py): the library's kernel
("base") against forms without one part of the step's chain (their outputs are wrong: the rel-L2 of each is recorded,
not checked) and against ukr_chunk64 (P.V in 64-key chunks, the same results); FORMS are call 1's, call 2 named its
own. Cases: the FP8 long request at q=4
and q=1 and FP8 MTP verify 16q/1kv at 32,768 keys (the bench's rotated inputs), and B=1 q=4 16q/1kv at 65,536 keys on
one input set, whose 33.5 MB of K/V stays in L2 between calls (the per-SM rate without HBM). Every form runs the
dispatcher's profile for the case. `ab_probe.check_and_time`: NaN-prefilled outputs against float64, alternated graph
timing, min of 5 rounds.
Usage: knock_ab.py OUT.jsonl [FORM ...]  (base is always timed)"""
import importlib
import json
import sys
from types import SimpleNamespace

sys.path.insert(0, "scripts")
from ab_probe import check_and_time, time_unified_case, unified_variant  # noqa: E402
from pagedattn import reference, workloads  # noqa: E402
from pagedattn.device import DeviceInfo  # noqa: E402
from pagedattn.profiles import select  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402

FORMS = ("base", "nopv", "nocopy", "noexp", "novote", "chunk64")
LABELS = ("B=1 q=4 kv=131072 16q/1kv d256 fp8", "B=1 q=1 kv=131072 16q/1kv d256 fp8",
          "B=20 q=4 kv=32768 16q/1kv d256 fp8")
L2_SHAPE = workloads.UnifiedShape((4,), (65536,), 16, 1, 256, kv_dtype="fp8")


def variants(case, forms) -> dict:
    profile = select.select_profile(case_shape_key(case), DeviceInfo.current()).profile
    assert profile.keys_as_rows, profile
    print(getattr(case, "label", "L2 B=1 q=4 kv=65536"), profile.short(), flush=True)
    return {form: unified_variant(importlib.import_module(f"ukr_{form}").launch_unified_keys_rows, profile)
            for form in ("base", *forms)}


if __name__ == "__main__":
    forms = [f for f in sys.argv[2:] or FORMS if f != "base"]
    with open(sys.argv[1], "w") as f:
        for case in [c for w in ("long-request", "mtp-verify") for c in workloads.get_workload(w).cases
                     if c.label in LABELS]:
            time_unified_case(case, variants(case, forms), f, runs=5)
        inputs = L2_SHAPE.build("cuda")
        row = {"case": "B=1 q=4 kv=65536 16q/1kv d256 fp8 (L2)", **check_and_time(
            variants(SimpleNamespace(shape=L2_SHAPE), forms), [inputs], reference.unified_attention(**inputs.kwargs), 5)}
        print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
        f.write(json.dumps(row) + "\n")
