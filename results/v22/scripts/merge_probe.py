"""v22 call 6: the split merge alone at the partial shapes of BF16 MTP (13 splits x 80 tokens x 16 heads),
the FP8 long request (256 splits x 1 token, 128 x 4 tokens) and FP8 MTP (6 splits x 80 tokens): graph-timed
median per launch shape (MERGE_VALUES, MERGE_WARPS, MERGE_MIN_COLUMNS patched), partials L2-warm as after
the attention kernel; every output compared with the default shape's (largest difference, relative to its largest value)."""
import itertools, json, sys
import torch
from pagedattn.ops import common
from pagedattn.timing import time_calls

SHAPES = {"bf16-mtp-13x80": (13, 80), "fp8-long-q1-256x1": (256, 1), "fp8-long-q4-128x4": (128, 4),
          "fp8-mtp-6x80": (6, 80)}
default = (common.MERGE_VALUES, common.MERGE_WARPS, common.MERGE_MIN_COLUMNS)
with open(sys.argv[1], "w") as f:
    for name, (splits, rows) in SHAPES.items():
        g = torch.Generator(device="cuda").manual_seed(splits)
        part = torch.randn(splits, rows, 16, 256, device="cuda", generator=g)
        lse = torch.randn(splits, rows, 16, device="cuda", generator=g) * 4
        lse[-1, : rows // 2] = float("-inf")  # an empty split for half the rows
        outs = {}
        for values, warps, min_cols in itertools.product((1024, 2048, 4096, 8192), (1, 2, 4), (16, 32)):
            common.MERGE_VALUES, common.MERGE_WARPS, common.MERGE_MIN_COLUMNS = values, warps, min_cols
            out = torch.full((rows, 16, 256), float("nan"), device="cuda", dtype=torch.bfloat16)
            common.launch_merge(part, lse, out)
            ms = time_calls([lambda o=out: common.launch_merge(part, lse, o)], rep_ms=50)
            outs[(values, warps, min_cols)] = out
            row = {"shape": name, "values": values, "warps": warps, "min_columns": min_cols, "us": 1e3 * ms,
                   "same_as_default": None}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
        common.MERGE_VALUES, common.MERGE_WARPS, common.MERGE_MIN_COLUMNS = default
        ref = outs[default]
        worst = max(((o.float() - ref.float()).abs().max() / ref.float().abs().max()).item() for o in outs.values())
        print(json.dumps({"shape": name, "largest_difference_from_default_relative": worst,
                          "nan": any(bool(o.isnan().any()) for o in outs.values())}), flush=True)
