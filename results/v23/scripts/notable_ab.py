"""v23: the no-table profiles (the sm90 rules', and the analytic default other GPUs get, run here)
with the v23 register estimate against the one the v22
estimate gave, on every bench case and on decode of 1-8 sequences, where the two differ; both timed
twice in alternation (graph timing, inputs rotated past L2), with the dispatched profile (the
table's, where a bucket is near) beside them where it is another; outputs NaN-prefilled, checked against float64 (up to 400,000
keys) or the dispatched (else old) profile's output. Usage: notable_ab.py OUT.jsonl [--dry]"""
import json, sys
from pagedattn import workloads
from pagedattn.device import DeviceInfo, KNOWN_DEVICES
from pagedattn.profiles import select
from pagedattn.tune import case_shape_key

DRY = "--dry" in sys.argv
device = KNOWN_DEVICES["NVIDIA_H200"] if DRY else DeviceInfo.current()
new_slots = select.program_slots


def old_slots(profile, key, dev):
    by_smem = dev.smem_per_block // max(1, select.smem_bytes(profile, key))
    by_regs = 65536 // (32 * profile.num_warps * (select.acc_registers(profile, key) + 64))
    return dev.num_sms * max(1, min(by_smem, by_regs, 4))


def no_table(key, slots, kind):
    select.program_slots = slots
    try:
        return select.untuned_selection(key, device).profile if kind == "rules" else select.default_profile(key, device)
    finally:
        select.program_slots = new_slots


cases = [c for w in workloads.WORKLOADS.values() for c in w.cases]
for b in (1, 4):
    for kv in (32768, 131072):
        for hq, hkv, d, dt in ((32, 8, 128, "bf16"), (32, 8, 128, "fp8"), (8, 1, 128, "bf16"), (32, 4, 64, "bf16")):
            cases.append(workloads.Case(f"B={b} q=1 kv={kv} {hq}q/{hkv}kv d{d} {dt}",
                                        workloads._uniform(b, 1, kv, hq, hkv, d, dt)))
picked = []
for kind in ("rules", "default"):
    for case in cases:
        key = case_shape_key(case)
        old, new = no_table(key, old_slots, kind), no_table(key, new_slots, kind)
        if old != new and (kind == "rules" or old.kernel == "triton"):
            dispatched = select.select_profile(key, device).profile
            picked.append((kind, case, key, old, new, dispatched))
            print(f"{kind:7s} {case.label:42s} old {old.short():34s} new {new.short():34s} dispatched {dispatched.short()}",
                  flush=True)
if DRY:
    sys.exit()

import torch  # noqa: E402
import pagedattn  # noqa: E402
from pagedattn import reference  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.timing import time_calls  # noqa: E402

run = {"unified": pagedattn.unified_attention, "sparse": pagedattn.sparse_attention}
with open(sys.argv[1], "w") as f:
    for kind, case, key, old, new, dispatched in picked:
        sets = _input_sets(case, "cuda")
        kw = sets[0].kwargs
        fn = run[case.shape.kernel]
        profiles = {"old": old, "new": new} | ({"dispatched": dispatched} if dispatched not in (old, new) else {})
        outs = {}
        for name, p in profiles.items():
            outs[name] = torch.full_like(kw["q"], float("nan"))
            fn(**kw, out=outs[name], profile=p)
        small = case.shape.kernel == "unified" and sum(case.shape.kv_lens) <= 400_000
        expected = reference.unified_attention(**kw) if small else outs.get("dispatched", outs["old"])
        rel = {n: reference.rel_l2(o, expected) for n, o in outs.items()}
        times = {n: [] for n in profiles}
        for _ in range(2):
            for name, p in profiles.items():
                times[name].append(time_calls([lambda k=s.kwargs, p=p, o=torch.empty_like(s.kwargs["q"]):
                                               fn(**k, out=o, profile=p) for s in sets]))
        row = {"no_table": kind, "case": case.label, "profiles": {n: p.short() for n, p in profiles.items()},
               "ms": {n: min(t) for n, t in times.items()}, "ms_both": times, "rel_l2": rel,
               "checked_against": "float64" if small else "another profile's output",
               "nan": any(bool(o.isnan().any()) for o in outs.values())}
        row["new_over_old"] = row["ms"]["new"] / row["ms"]["old"]
        print(json.dumps(row), flush=True)
        f.write(json.dumps(row) + "\n")
        del sets, outs
        torch.cuda.empty_cache()
