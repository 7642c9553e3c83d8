"""Which Triton-kernel forms build for sm80 / sm90 / sm100 / sm120 offline (Triton 3.6.0)."""
import itertools, json, sys, time
sys.path.insert(0, "scripts"); sys.path.insert(0, ".")
import compile_report as cr
from triton.backends.compiler import GPUTarget
from pagedattn.profiles.types import LaunchProfile
out = open(sys.argv[1], "a")
archs = [int(a) for a in sys.argv[2].split(",")]
for arch in archs:
    cr.TARGET = GPUTarget("cuda", arch, 32)
    for kernel, head, kv, m, kvm in itertools.product(("unified", "sparse"), (128, 256), ("bf16", "fp8"), (16, 32, 64, 128), (False, True)):
        if kernel == "sparse" and (m > 64 or kvm):
            continue
        w = 8 if m * head >= 128 * 128 else 4
        p = LaunchProfile(block_m=m, tile_n=64 if head <= 128 or kv == "fp8" else 32, num_splits=2, num_warps=w, num_stages=3, kv_major=kvm)
        group = 16 if head == 256 else 4
        build = cr.compile_unified if kernel == "unified" else cr.compile_sparse
        t = time.time()
        try:
            info = build("bf16", kv, min(group, m), head, 16, p, True)
            rec = dict(ok=True, regs=info["regs"], stack=info["stack"], smem=info["smem"])
        except Exception as e:
            rec = dict(ok=False, error=str(e)[:120])
        rec.update(arch=arch, kernel=kernel, head=head, kv=kv, m=m, kv_major=kvm, s=round(time.time() - t, 1))
        out.write(json.dumps(rec) + "\n"); out.flush()
