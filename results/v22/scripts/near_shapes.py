"""Shapes near the unified buckets (kv x 1/4, 1/2, 2; batch x 1/2, 2) where the near bucket's profile (as
dispatched) and the rules' profile differ in kernel or in splitting at all."""
import itertools
from pagedattn.device import KNOWN_DEVICES
from pagedattn.profiles import select, tables
from pagedattn.profiles.types import ShapeKey
from pagedattn import workloads
from pagedattn.tune import case_shape_key

H200 = KNOWN_DEVICES["NVIDIA_H200"]

def family(p):
    return "wgmma" if p.warpgroup_mma else "keysrows" if p.keys_as_rows else "exchange" if p.shared_exchange else "triton"

def near_shapes():
    seen = set()
    for w in workloads.WORKLOADS.values() if isinstance(workloads.WORKLOADS, dict) else workloads.WORKLOADS:
        if w.kernel != "unified":
            continue
        for c in w.cases:
            s = c.shape
            if len(set(s.query_lens)) != 1 or len(set(s.kv_lens)) != 1:
                continue
            b, q, kv = len(s.query_lens), s.query_lens[0], s.kv_lens[0]
            for fb, fkv in itertools.product((0.5, 1, 2), (0.25, 0.5, 1, 2)):
                if (fb, fkv) == (1, 1):
                    continue
                nb, nkv = max(1, int(b * fb)), max(q, int(kv * fkv))
                if nkv > 140000 or nb * nkv > 3_000_000:
                    continue
                k = (nb, q, nkv, s.num_q_heads, s.num_kv_heads, s.head_size, s.block_size, s.kv_dtype, w.name)
                if k in seen:
                    continue
                seen.add(k)
                yield k

if __name__ == "__main__":
    rows = []
    for nb, q, nkv, hq, hkv, d, page, kvd, wname in near_shapes():
        case = workloads.Case("x", workloads.UnifiedShape((q,) * nb, (nkv,) * nb, hq, hkv, d, page, kv_dtype=kvd))
        key = case_shape_key(case)
        sel = select.select_profile(key, H200)
        rule = select.untuned_selection(key, H200)
        if sel.source != "table":
            continue
        a, r = sel.profile, rule.profile
        if family(a) != family(r) or (a.num_splits == 1) != (r.num_splits == 1):
            print(f"B={nb} q={q} kv={nkv} {hq}q/{hkv}kv d{d} {kvd} [{wname}]  table {a.short()}  rules {r.short()}")
