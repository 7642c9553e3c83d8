"""v43: the per-SM rate of ws_fp8.py's kernel against the library's where HBM is not the limit: FP8 verify whose K/V
(33.5 MB) stays in the H100's 50 MB L2 between calls (one input set, not the bench's rotation), so the time is the
kernels' own loop, prologue and merge. Cases: B=8 q=4 16q/1kv at 8,192 keys, B=1 q=4 16q/1kv at 65,536 keys (the long
request's shape at half its keys). Variants: the dispatcher's profile ("base"), ws_ab.py's ccahqc, sv5 and sv5n (call 7 ran
ccahq and ccahqc).
`ab_probe.check_and_time`: NaN-prefilled outputs against float64, alternated graph timing, min of 5 rounds.
--one NAME: the 65,536-key case's ws kernel with config NAME, three calls on one input set (for ncu).
Usage: l2_ab.py OUT.jsonl | l2_ab.py --one NAME"""
import json
import sys
from types import SimpleNamespace

sys.path.insert(0, "scripts")
from ab_probe import check_and_time, unified_variant  # noqa: E402
from pagedattn import reference, workloads  # noqa: E402
from pagedattn.device import DeviceInfo  # noqa: E402
from pagedattn.ops.unified_keys_rows import launch_unified_keys_rows  # noqa: E402
from pagedattn.ops.verify_wgmma import launch_verify_wgmma  # noqa: E402
from pagedattn.profiles import select  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402
from ws_ab import CONFIGS, three_calls, ws_splits, ws_variant  # noqa: E402

SHAPES = {"B=8 q=4 kv=8192 16q/1kv fp8 (L2)": workloads.UnifiedShape((4,) * 8, (8192,) * 8, 16, 1, 256, kv_dtype="fp8"),
          "B=1 q=4 kv=65536 16q/1kv fp8 (L2)": workloads.UnifiedShape((4,), (65536,), 16, 1, 256, kv_dtype="fp8")}

if __name__ == "__main__" and sys.argv[1] == "--one":
    three_calls(SHAPES["B=1 q=4 kv=65536 16q/1kv fp8 (L2)"], sys.argv[2])
elif __name__ == "__main__":
    with open(sys.argv[1], "w") as f:
        for label, shape in SHAPES.items():
            inputs = shape.build("cuda")
            base = select.select_profile(case_shape_key(SimpleNamespace(shape=shape)), DeviceInfo.current()).profile
            launch = launch_unified_keys_rows if base.keys_as_rows else launch_verify_wgmma
            variants = {"base": unified_variant(launch, base)}
            variants.update({name: ws_variant(CONFIGS[name], ws_splits(shape)) for name in ("ccahqc", "sv5", "sv5n")})
            print(label, base.short(), flush=True)
            row = {"case": label, **check_and_time(variants, [inputs], reference.unified_attention(**inputs.kwargs), 5)}
            print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
            f.write(json.dumps(row) + "\n")
