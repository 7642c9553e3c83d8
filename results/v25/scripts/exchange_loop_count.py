"""Offline (no GPU): the sparse exchange kernel's sm90 build per form, its registers and the SASS
instructions of its KV loop's hot path (the loop body without the rare rescale branch), by opcode.
Run from a checkout's root: python3 results/v25/scripts/exchange_loop_count.py [OUT.json]"""
import collections, json, re, subprocess, sys, tempfile
sys.path.insert(0, "scripts"); sys.path.insert(0, ".")
import compile_report as cr
import triton
from triton.experimental.gluon._runtime import GluonASTSource
from pagedattn.ops.sparse_exchange import sparse_exchange_kernel as kernel


def build(group, tile, kv):
    ptrs = cr._pointer_types("bf16", kv, "sparse")
    sig, const = cr._signature(kernel, ptrs, {"k_scale_value", "v_scale_value", "softmax_scale"},
                               {"counts_ptr", "k_scale_ptr", "v_scale_ptr"})
    const.update(NUM_Q_HEADS=group, GROUP=group, D=256, PAGE=16, TILE_N=tile, STAGES=2, SPLIT=False, HAS_COUNTS=False,
                 KV_FP8=kv == "fp8", K_SCALE_TENSOR=False, V_SCALE_TENSOR=False, DENSE_PAGES=True)
    divisible = [i for i, n in enumerate(kernel.arg_names) if n.startswith("stride") or n.endswith("_ptr")]
    attrs = {(i,): [["tt.divisibility", 16]] for i in divisible if sig[kernel.arg_names[i]] != "constexpr"}
    compiled = triton.compile(GluonASTSource(fn=kernel, signature=sig, constexprs=const, attrs=attrs), target=cr.TARGET,
                              options={"num_warps": 2, "num_stages": 1})
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(compiled.asm["cubin"]); f.flush()
        sass = subprocess.run([str(cr.CUOBJDUMP), "--dump-sass", f.name], capture_output=True, text=True).stdout
        usage = subprocess.run([str(cr.CUOBJDUMP), "--dump-resource-usage", f.name], capture_output=True, text=True).stdout
    return sass, int(re.search(r"REG:(\d+)", usage).group(1))


def hot_loop(sass):
    lines = [l for l in sass.splitlines() if re.match(r"\s+/\*[0-9a-f]{4,}\*/", l)]
    addr = lambda l: int(re.match(r"\s+/\*([0-9a-f]+)\*/", l).group(1), 16)
    back, fwd = [], []
    for l in lines:
        m = re.search(r"BRA (0x[0-9a-f]+)", l)
        if m:
            target = int(m.group(1), 16)
            (back if target < addr(l) else fwd).append((min(target, addr(l)), max(target, addr(l))))
    lo, hi = max(back, key=lambda r: r[1] - r[0])
    inner = [r for r in fwd if lo < r[0] < hi and r[1] < hi]
    skip = max(inner, key=lambda r: r[1] - r[0]) if inner else (0, 0)
    body = [l for l in lines if lo <= addr(l) <= hi and not skip[0] < addr(l) < skip[1]]
    ops = collections.Counter(re.sub(r"^\s+/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?", "", l).split()[0].split(".")[0] for l in body)
    return len(body), dict(ops.most_common())


rows = []
for group, tile, kv in ((12, 32, "fp8"), (12, 16, "fp8"), (12, 32, "bf16"), (12, 16, "bf16")):
    sass, regs = build(group, tile, kv)
    count, ops = hot_loop(sass)
    rows.append({"form": f"{kv} group {group} tile {tile} st2", "regs": regs, "hot_loop": count, "ops": ops})
    print(rows[-1]["form"], "regs", regs, "hot loop", count, {k: ops.get(k, 0) for k in ("F2FP", "PRMT", "HMMA", "SHFL", "IADD3", "VIADD", "IMAD", "FADD")})
if len(sys.argv) > 1:
    json.dump(rows, open(sys.argv[1], "w"), indent=1)
