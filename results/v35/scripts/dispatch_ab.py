"""v35 call 2: item 1's dispatch (a short launch's own query class, its sm90 rows, the 17-32-row verify row, the
near bucket's query-block boundary) against v34's on call 1's cases (rows32_ab.py), on the same machine: "v34" is
the profile call 1 recorded for the dispatcher (table) and for the analytic default the rules gave these calls
without a table (read from call 1's JSON lines), "v35" what the tree's dispatcher and untuned plan give now. Verify
calls are timed whole; a mixed batch's short launch alone (`tune.short_part_launch`, its rows checked).
NaN-prefilled outputs against float64, alternated graph timing over the bench's rotated inputs, min of 3 rounds.
Usage: dispatch_ab.py CALL1.jsonl OUT.jsonl"""
import json
import sys

import torch

from pagedattn import api, tune
from pagedattn.bench import _input_sets
from pagedattn.device import DeviceInfo
from pagedattn.profiles import select
from pagedattn.profiles.types import LaunchProfile
from rows32_ab import DEV, FORMS, cases, plan_call, short_rows
from ab_probe import checked_and_timed

call1 = {row["case"]: row["profiles"] for row in map(json.loads, open(sys.argv[1]))}
device = DeviceInfo.current()
with open(sys.argv[2], "w") as f:
    for part, case in cases():
        sets = _input_sets(case, DEV)
        kw0 = sets[0].kwargs
        key = api.unified_shape_key(kw0["q"], kw0["k_cache"], kw0["block_table"], kw0["max_seqlen_q"],
                                    kw0["max_seqlen_k"])
        old = call1[case.label]
        profiles = {"v34 dispatch": LaunchProfile.from_short(old["dispatch"]),
                    "v34 untuned": LaunchProfile.from_short(old[FORMS[0]])}
        rows = None
        if part == "verify":
            profiles["v35 dispatch"] = select.select_profile(key, device).profile
            profiles["v35 untuned"] = select.untuned_selection(key, device).profile
            variants = {name: plan_call(p) for name, p in profiles.items()}
        else:
            short_key = select.short_part_key(key)
            profiles["v35 dispatch"] = select.short_selection(short_key, device).profile
            profiles["v35 untuned"] = select.untuned_launch_plan(key, device)[1].selection.profile
            variants = {name: (lambda kw, out, p=p: tune.short_part_launch(p, out, **kw)) for name, p in profiles.items()}
            rows = short_rows(case.shape)
        checks, ms, times = checked_and_timed(case.label, variants, sets, rows, 3)
        row = {"part": part, "case": case.label, "profiles": {n: p.short() for n, p in profiles.items()}, "ms": ms,
               "ms_all": times, "checks": checks, "dispatch_ratio": ms["v35 dispatch"] / ms["v34 dispatch"],
               "untuned_ratio": ms["v35 untuned"] / ms["v34 untuned"]}
        print(json.dumps({k: row[k] for k in ("case", "profiles", "ms", "dispatch_ratio", "untuned_ratio")}), flush=True)
        f.write(json.dumps(row) + "\n")
        del sets
        if DEV == "cuda":
            torch.cuda.empty_cache()
