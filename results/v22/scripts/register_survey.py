import sys, itertools; sys.path.insert(0,'scripts')
import compile_report as cr
from pagedattn.profiles.types import LaunchProfile, ShapeKey
from pagedattn.profiles import select
from pagedattn.device import KNOWN_DEVICES
H=KNOWN_DEVICES["NVIDIA_H200"]
cases = [  # (q kv dtype, group, head, profile short, query_class)
 ("bf16", 4, 128, "m16/n128/s2/w4/st2", "decode"), ("fp8", 4, 128, "m16/n128/s2/w4/st2", "decode"),
 ("bf16", 4, 128, "m16/n64/s2/w4/st3", "decode"), ("bf16", 4, 128, "m16/n64/s2/w4/st2", "decode"),
 ("bf16", 4, 128, "m16/n128/s2/w8/st2", "decode"), ("bf16", 4, 128, "m16/n32/s2/w4/st3", "decode"),
 ("bf16", 16, 256, "m64/n32/s2/w8/st3", "verify"), ("bf16", 16, 256, "m64/n32/s2/w4/st3", "verify"),
 ("bf16", 16, 256, "m64/n16/s2/w4/st4/ahead", "verify"), ("fp8", 16, 256, "m64/n32/s2/w4/st4/ahead", "verify"),
 ("bf16", 4, 128, "m128/n64/s2/w8/st3", "prefill"), ("bf16", 4, 128, "m128/n128/s2/w8/st2/ahead", "prefill"),
 ("bf16", 4, 128, "m16/n128/s2/w4/st3", "decode"),
]
for kv, group, head, short, qc in cases:
    p = LaunchProfile.from_short(short)
    info = cr.compile_unified("bf16", kv, group, head, 16, p, True)
    key = ShapeKey("unified", kv, head, group, qc, 1, 1, 1, 1, 4096)
    est = select.acc_registers(p, key) + 64
    print(f"{kv:5s} g{group:2d} d{head} {short:28s} regs {info['regs']:3d} stack {info['stack']:3d} smem {info['smem']:6d} | est regs {est:3d} smem {select.smem_bytes(p,key):6d} slots/SM est {select.program_slots(p,key,H)//132} real {min(65536//(32*p.num_warps*info['regs']), 232448//max(1,info['smem']), 4)}", flush=True)
