"""select.program_slots (estimate) against the slots the built registers and shared memory allow."""
import json, sys, collections
from pagedattn.profiles import select
from pagedattn.profiles.types import LaunchProfile, ShapeKey
from pagedattn.device import KNOWN_DEVICES
H = KNOWN_DEVICES["NVIDIA_H200"]
rows = [json.loads(l) for l in open(sys.argv[1])]
def real_slots(r):
    regs = -(-r["regs"] // 8) * 8
    return max(1, min(65536 // (32 * r["w"] * regs), H.smem_per_block // max(1, r["smem"]), 4))
def old_slots(p, key):
    by_smem = H.smem_per_block // max(1, select.smem_bytes(p, key))
    by_regs = 65536 // (32 * p.num_warps * (select.acc_registers(p, key) + 64))
    return max(1, min(by_smem, by_regs, 4))
stats = collections.defaultdict(collections.Counter)
for r in rows:
    if "error" in r:
        continue
    p = LaunchProfile(block_m=r["m"], tile_n=r["n"], num_splits=2, num_warps=r["w"], num_stages=r["st"])
    group = min(16 if r["head"] == 256 else 4, r["m"])
    key = ShapeKey(r["kernel"], r["kv"], r["head"], group, "decode" if r["kernel"] == "sparse" else "verify", 1, 1, 1, 1, 4096)
    real = real_slots(r)
    for name, est in (("old", old_slots(p, key)), ("new", select.program_slots(p, key, H) // H.num_sms)):
        d = est - real
        stats[(r["kernel"], name)]["right" if d == 0 else "too many" if d > 0 else "too few"] += 1
        if name == "new" and d != 0 and "-v" in sys.argv:
            print(r["kernel"], r["kv"], r["head"], p.short(), "regs", r["regs"], "est", select.thread_registers(p, key), "smem", r["smem"], "est", select.smem_bytes(p, key), "slots", est, "real", real)
for k, c in sorted(stats.items()):
    print(k, dict(c))
