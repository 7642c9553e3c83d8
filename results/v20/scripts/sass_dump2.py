"""Dump normalised SASS of both wgmma-family unified kernels (one-block or multi-block builds) from tree argv[1] into argv[2]."""
import os, sys, subprocess, tempfile, re
os.environ["TRITON_INTERPRET"] = "0"
tree, outdir, multi = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
sys.path.insert(0, tree); sys.path.insert(0, tree + "/scripts")
import triton
import compile_report as cr
from pagedattn.profiles.types import LaunchProfile
os.makedirs(outdir, exist_ok=True)
def grab(kernel, sig, const, num_warps, num_stages, source=cr.ASTSource):
    divisible = [i for i, n in enumerate(kernel.arg_names) if n.startswith("stride") or n.endswith("_ptr")]
    attrs = {(i,): [["tt.divisibility", 16]] for i in divisible if sig[kernel.arg_names[i]] != "constexpr"}
    c = triton.compile(source(fn=kernel, signature=sig, constexprs=const, attrs=attrs), target=cr.TARGET,
                       options={"num_warps": num_warps, "num_stages": num_stages})
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(c.asm["cubin"]); f.flush()
        sass = subprocess.run([str(cr.CUOBJDUMP), "--dump-sass", f.name], capture_output=True, text=True).stdout
        usage = subprocess.run([str(cr.CUOBJDUMP), "--dump-resource-usage", f.name], capture_output=True, text=True).stdout
    return sass, usage, c.metadata.shared
cr._compile = grab
kw = dict(multi_block=True) if multi else {}
jobs = []
for q, g, m, t, st, split in [("bf16", 16, 64, 128, 2, True), ("bf16", 16, 16, 128, 2, True), ("bf16", 16, 16, 64, 2, True),
                              ("bf16", 16, 32, 64, 2, False), ("bf16", 8, 32, 128, 3, True)]:
    prof = LaunchProfile(m, t, 2 if split else 1, t // 16, st, keys_as_rows=True)
    jobs.append((f"ukr_g{g}_m{m}_n{t}_s{st}_{int(split)}", lambda q=q, g=g, prof=prof, split=split: cr.compile_unified_keys_rows(q, g, 256, 16, prof, split, **kw)))
for kv, g, head, st, ahead, split in [("bf16", 16, 256, 5, True, True), ("bf16", 16, 256, 4, True, True), ("fp8", 16, 256, 4, False, True),
                                      ("bf16", 8, 128, 4, False, False), ("fp8", 4, 64, 6, True, True)]:
    prof = LaunchProfile(64, 16, 13 if split else 1, 4, st, warpgroup_mma=True, addresses_ahead=ahead)
    jobs.append((f"wg_{kv}_g{g}_d{head}_s{st}_a{int(ahead)}_{int(split)}", lambda kv=kv, g=g, head=head, prof=prof, split=split: cr.compile_verify_wgmma("bf16", kv, g, head, 16, prof, split, **kw)))
for name, fn in jobs:
    sass, usage, smem = fn()
    lines = [l.split("*/")[1] for l in sass.splitlines() if re.search(r"/\*[0-9a-f]{4}\*/", l)]
    lines = [re.sub(r"c\[0x0\]\[0x[0-9a-f]+\]", "c[0x0][P]", re.sub(r"/\*.*", "", l)).rstrip() for l in lines]
    open(f"{outdir}/{name}.sass", "w").write("\n".join(lines))
    print(name, re.search(r"REG:(\d+)", usage).group(0), re.search(r"STACK:(\d+)", usage).group(0), smem, len(lines), flush=True)
