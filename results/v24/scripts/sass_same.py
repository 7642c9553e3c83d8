"""SASS text hashes of Triton-kernel forms per arch, one JSON line per form (to diff two trees).
Usage: sass_same.py ARCHS (e.g. 80,90)"""
import hashlib, json, re, subprocess, sys, tempfile
sys.path.insert(0, "scripts"); sys.path.insert(0, ".")
import compile_report as cr
from triton.backends.compiler import GPUTarget
from pagedattn.profiles.types import LaunchProfile
orig = cr.triton.compile
cap = {}
def comp(*a, **k):
    c = orig(*a, **k)
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(c.asm["cubin"]); f.flush()
        sass = subprocess.run([str(cr.CUOBJDUMP), "--dump-sass", f.name], capture_output=True, text=True).stdout
    sass = "\n".join(l for l in sass.splitlines() if re.search(r"/\*[0-9a-f]{4}\*/", l))
    cap["h"] = hashlib.sha1(sass.encode()).hexdigest()[:12]
    return c
cr.triton.compile = comp
FORMS = (("unified", "bf16", 128, 128, 64, 8, 3, False, False, False), ("unified", "bf16", 128, 16, 64, 4, 3, True, True, True),
         ("unified", "fp8", 256, 64, 32, 4, 3, False, True, True), ("unified", "bf16", 256, 64, 32, 4, 3, True, False, True),
         ("unified", "fp8", 128, 16, 64, 4, 3, True, True, True), ("unified", "fp8", 256, 16, 128, 4, 2, False, False, True),
         ("unified", "fp8", 128, 128, 64, 8, 3, False, False, False),
         ("sparse", "bf16", 256, 16, 32, 4, 2, False, True, False), ("sparse", "fp8", 128, 32, 64, 4, 3, False, False, True),
         ("sparse", "fp8", 256, 16, 64, 4, 2, True, True, False), ("sparse", "fp8", 256, 16, 32, 2, 2, False, True, True))
for arch in [int(a) for a in sys.argv[1].split(",")]:
    cr.TARGET = GPUTarget("cuda", arch, 32)
    for kernel, kv, head, m, n, w, st, kvm, ahead, split in FORMS:
        p = LaunchProfile(block_m=m, tile_n=n, num_splits=2 if split else 1, num_warps=w, num_stages=st, kv_major=kvm, addresses_ahead=ahead)
        build = cr.compile_unified if kernel == "unified" else cr.compile_sparse
        try:
            info = build("bf16", kv, min(16 if head == 256 else 4, m), head, 16, p, split)
            rec = dict(regs=info["regs"], stack=info["stack"], sass=cap["h"])
        except Exception as e:
            rec = dict(error=str(e)[-150:])
        print(json.dumps(dict(arch=arch, kernel=kernel, kv=kv, head=head, m=m, n=n, kvm=kvm, ahead=ahead, **rec)), flush=True)
