"""Where the v24 split rule (waves x tiles per segment over even counts) and v23's (FlashAttention's
85 % wave-efficiency rule) choose differently, on the H200's no-table rules and the analytic default."""
import itertools, json, sys
from pagedattn import workloads
from pagedattn.device import KNOWN_DEVICES
from pagedattn.profiles import select, tables
from pagedattn.profiles.types import cdiv
from pagedattn.tune import case_shape_key


def old_choose_splits(programs, tiles, slots, max_splits):
    if programs >= 0.8 * slots:
        return 1
    limit = max(1, min(max_splits, tiles // select.MIN_TILES_PER_SPLIT))
    best = max(select.wave_efficiency(programs * s, slots) for s in range(1, limit + 1))
    return next(s for s in range(1, limit + 1) if select.wave_efficiency(programs * s, slots) >= select.WAVE_SLACK * best)


NEW = select.choose_splits


def choice(key, device, how, rule):
    select.choose_splits = rule
    tables.clear_cache()
    try:
        if how == "rules":
            return select.untuned_selection(key, device).profile
        return select.default_profile(key, device)
    finally:
        select.choose_splits = NEW


def cases():
    for b, q, kv, (hq, hkv, d, dt) in itertools.product(
            (1, 2, 4, 8, 20, 64), (1, 4), (1024, 4096, 16384, 32768, 131072),
            ((32, 8, 128, "bf16"), (16, 1, 256, "fp8"), (16, 1, 256, "bf16"), (32, 2, 256, "fp8"))):
        if b * kv > 64 * 32768:
            continue
        yield workloads.Case(f"B={b} q={q} kv={kv} {hq}q/{hkv}kv d{d} {dt}", workloads._uniform(b, q, kv, hq, hkv, d, dt))


if __name__ == "__main__":
    rows = []
    for how, dev in (("rules", "NVIDIA_H200"), ("default", "NVIDIA_H200"), ("default", "NVIDIA_A100_SXM4_80GB")):
        device = KNOWN_DEVICES[dev]
        for case in cases():
            if dev.startswith("NVIDIA_A100") and "fp8" in case.label:
                pass
            key = case_shape_key(case)
            old, new = choice(key, device, how, old_choose_splits), choice(key, device, how, NEW)
            if old != new:
                tiles = cdiv(key.kv_len, new.tile_n)
                rows.append(dict(how=how, device=dev, case=case.label, old=old.short(), new=new.short(),
                                 tps_old=cdiv(tiles, old.num_splits), tps_new=cdiv(tiles, new.num_splits)))
    for r in rows:
        print(json.dumps(r))
    print(len(rows), file=sys.stderr)
