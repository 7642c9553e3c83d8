"""Probe: which unified kernel is fastest on verify and decode shapes outside the bench's workloads?

The sm90 rule sends FP8 decode and verify at head size 256 over 4,096 keys to the keys-as-rows kernel
(ops/unified_keys_rows.py); the bench measured it at 8,192 keys and more, on one or two KV heads.
This times, per shape, every kernel that can run it at the split count the wave rule gives that
kernel's profile (`select.with_splits`): the Triton kernel at the analytic default, the
warpgroup-MMA kernel (ops/verify_wgmma.py, 16-key tiles, 4 stages) and the keys-as-rows kernel's
two forms (128-key tiles on two warpgroups; 64-key tiles on one, up to 32 packed rows; 2 stages),
each checked against the float64 reference. Shapes: MTP verify (B=20, q=4, 16q/1kv) at
1,024-8,192 keys, with 8 draft tokens (q=8: 128 packed rows, two 64-row query blocks per sequence
on both Gluon kernels) at 2,048-32,768 keys, the same with BF16 pages (Triton against wgmma), batch
decode (B=64, q=1, 16q/1kv and 32q/2kv) at 4,096, 16,384 and 32,768 keys, and the single long
request (B=1, q=1, 16q/1kv, 131,072 keys). One JSON row per (shape, kernel) in OUT.jsonl (perf-notes
v16 item 9, v19 item 1, v20 item 1). sm90 only.

    PYTHONPATH=. python3 scripts/unified_kernel_choice_probe.py OUT.jsonl
"""

import json
import sys

import pagedattn
from pagedattn import LaunchProfile, reference
from pagedattn.bench import _input_sets
from pagedattn.device import DeviceInfo
from pagedattn.profiles import select
from pagedattn.timing import time_calls
from pagedattn.tune import as_keys_as_rows, case_shape_key
from pagedattn.workloads import Case, UnifiedShape

SHAPES = [("mtp", 20, 4, 16, 1, kv, "fp8") for kv in (1024, 2048, 4096, 8192)] + \
    [("mtp", 20, 8, 16, 1, kv, pages) for pages in ("fp8", "bf16") for kv in (2048, 4096, 8192, 32768)] + \
    [("decode", 64, 1, hq, hkv, kv, "fp8") for hq, hkv in ((16, 1), (32, 2)) for kv in (4096, 16384, 32768)] + \
    [("decode", 1, 1, 16, 1, 131072, "fp8")]
KERNELS = {
    "triton": None,
    "wgmma": LaunchProfile(64, 16, 1, 4, 4, warpgroup_mma=True),
    "keysrows": LaunchProfile(64, 128, 1, 8, 2, keys_as_rows=True),
    "keysrows64": LaunchProfile(16, 64, 1, 4, 2, keys_as_rows=True),
}


def probe_cases() -> list[Case]:
    return [Case(f"{name} B={batch} q={q_len} kv={kv_len} {q_heads}q/{kv_heads}kv d256 {pages}",
                 UnifiedShape((q_len,) * batch, (kv_len,) * batch, q_heads, kv_heads, 256, 16, kv_dtype=pages))
            for name, batch, q_len, q_heads, kv_heads, kv_len, pages in SHAPES]


def probe_profiles(key, device) -> dict[str, LaunchProfile]:
    """Per kernel that fits `key` on `device`, the profile the probe times: the analytic default for
    the Triton kernel, the fixed fields of the Gluon kernels (keys-as-rows with the call's packed
    rows as the tuner's move sets them, `tune.as_keys_as_rows`: the 128-key form in blocks of 64 rows
    where there are more, the 64-key form only where they fit one block), each with the wave rule's
    splits for its own program slots."""
    found = {}
    for kernel, base in KERNELS.items():
        if base is None:
            profile = select.default_profile(key, device)
        elif base.keys_as_rows:
            profile = as_keys_as_rows(base, key)
            if profile.tile_n != base.tile_n:  # the 64-key form's rows do not fit: the other form, timed already
                continue
            profile = select.with_splits(profile, key, device)
        else:
            profile = select.with_splits(base, key, device)
        if select.unfit_reason(profile, key, device) is None:
            found[kernel] = profile
    return found


def main() -> int:
    device = DeviceInfo.current()
    with open(sys.argv[1], "w") as f:
        for case in probe_cases():
            key = case_shape_key(case)
            sets = _input_sets(case, "cuda")
            expected = reference.unified_attention(**sets[0].kwargs)
            for kernel, profile in probe_profiles(key, device).items():
                out = pagedattn.unified_attention(**sets[0].kwargs, profile=profile)
                ms = time_calls([lambda k=s.kwargs: pagedattn.unified_attention(**k, profile=profile) for s in sets])
                row = {"shape": case.label, "kernel": kernel, "profile": profile.short(), "ms": ms,
                       "tbps": sets[0].bytes_moved / ms / 1e9, "rel_l2": reference.rel_l2(out, expected),
                       "rules": select.untuned_selection(key, device).profile.short()}
                print(json.dumps(row), flush=True)
                f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
