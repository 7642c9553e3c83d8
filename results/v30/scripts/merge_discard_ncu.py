"""v30 call 1, under ncu (--cache-control none, so L2 keeps its state from one kernel to the next): HBM bytes
read and written by each kernel of CALLS eager calls per merge variant of merge_discard_ab.py, one after
the other on one input set; a dirty partial line left in L2 by one call's merge shows up as written bytes
in a later kernel. The order of the profiled kernels is printed to stderr.
Usage: ncu ... merge_discard_ncu.py"""
import sys
import torch
sys.path.insert(0, "results/v30/scripts")
from merge_discard_ab import VARIANTS, WIDE, merge_variant, table_profile  # noqa: E402
from pagedattn import workloads  # noqa: E402

CALLS = 4
CASES = (("mtp-verify", "B=20 q=4 kv=32768 16q/1kv d256 bf16", ("keep", "discard")),
         ("long-request", "B=1 q=4 kv=131072 16q/1kv d256 fp8", ("keep", "discard")),
         ("long-request", "B=1 q=1 kv=131072 16q/1kv d256 fp8", ("keep", "keep-c32", "discard-c32")))

for name, label, names in CASES:
    case = next(c for c in workloads.get_workload(name).cases if c.label == label)
    inputs = case.build("cuda", seed=0)
    profile = table_profile(case)
    out = torch.empty_like(inputs.kwargs["q"])
    for v in names:
        call = merge_variant(dict(VARIANTS, **WIDE)[v], profile)
        for i in range(CALLS):
            call(inputs.kwargs, out)
            torch.cuda.synchronize()
            print(f"{label} | {v} | call {i}", file=sys.stderr, flush=True)
    del inputs, out
    torch.cuda.empty_cache()
