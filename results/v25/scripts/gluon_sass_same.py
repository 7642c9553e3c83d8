"""SASS text hashes of the unified Gluon kernels' forms (sm90), one JSON line per form, to diff two trees
(v25 moved their shared helpers to ops/gluon_common.py). Usage: gluon_sass_same.py"""
import hashlib, json, re, subprocess, sys, tempfile
sys.path.insert(0, "scripts"); sys.path.insert(0, ".")
import compile_report as cr
from pagedattn.profiles.types import LaunchProfile
orig = cr.triton.compile
cap = {}
def comp(*a, **k):
    c = orig(*a, **k)
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(c.asm["cubin"]); f.flush()
        sass = subprocess.run([str(cr.CUOBJDUMP), "--dump-sass", f.name], capture_output=True, text=True).stdout
    sass = "\n".join(re.sub(r"/\* 0x[0-9a-f]+ \*/", "", l) for l in sass.splitlines() if re.search(r"/\*[0-9a-f]{4}\*/", l))
    cap["h"] = hashlib.sha1(sass.encode()).hexdigest()[:12]
    return c
cr.triton.compile = comp
for kv, stages, ahead in (("bf16", 4, True), ("bf16", 5, True), ("fp8", 4, False), ("fp8", 6, False)):
    cr.compile_verify_wgmma("bf16", kv, 16, 256, 16, LaunchProfile(64, 16, 13, 4, stages, addresses_ahead=ahead, warpgroup_mma=True), True)
    print(json.dumps({"form": f"wgmma {kv} st{stages}", "sass": cap["h"]}))
for block_m, tile, stages in ((16, 128, 2), (64, 128, 2), (16, 64, 2)):
    cr.compile_unified_keys_rows("bf16", 16, 256, 16, LaunchProfile(block_m, tile, 8, tile // 16, stages, keys_as_rows=True), True)
    print(json.dumps({"form": f"keysrows m{block_m} n{tile} st{stages}", "sass": cap["h"]}))
