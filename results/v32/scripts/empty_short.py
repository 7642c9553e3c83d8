"""v32 call 7: what a short-sequence launch costs when a prefill call has no short sequence (every program
exits after its binary search): the launch alone (`tune.short_part_launch`, the mixed batches' tuned short
profile) against the whole call, on prefill batches of 4 x 8,192 and 16 x 2,048 queries (32q/8kv, D=128,
BF16), graph timing (`timing.time_calls`). Usage: empty_short.py OUT.jsonl"""
import json
import sys

import torch

from pagedattn import api, tune
from pagedattn.profiles.types import LaunchProfile
from pagedattn.timing import time_calls
from pagedattn.workloads import UnifiedShape

SHORT = LaunchProfile.from_short("m16/n128/s1/w4/st3/rowmajor/ahead")
with open(sys.argv[1], "w") as f:
    for batch, n in ((4, 8192), (16, 2048)):
        kw = UnifiedShape((n,) * batch, (n,) * batch, 32, 8, 128).build("cuda", seed=0).kwargs
        out = torch.full_like(kw["q"], float("nan"))
        short_ms = time_calls([lambda: tune.short_part_launch(SHORT, out, **kw)])
        untouched = bool(out.isnan().all())
        call_ms = time_calls([lambda: api.unified_attention(**kw, out=out)])
        plan = api.choose_unified_plan(kw["q"], kw["k_cache"], kw["block_table"], kw["max_seqlen_q"], kw["max_seqlen_k"])
        row = {"batch": batch, "queries": n, "short_launch_ms": short_ms, "rows_untouched": untouched,
               "call_ms": call_ms, "call_launches": len(plan), "grid_programs": (batch * n // 4 + batch) * 8}
        print(json.dumps(row), flush=True)
        f.write(json.dumps(row) + "\n")
