import sys, os, re, subprocess, tempfile
os.environ["TRITON_INTERPRET"] = "0"
sys.path.insert(0, "scripts"); sys.path.insert(0, "build/v22/ws")
import compile_report as cr
import triton
from triton.experimental.gluon._runtime import GluonASTSource
from verify_ws import verify_ws_kernel
tile, st, regs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
k = verify_ws_kernel
ptrs = {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "part_ptr": "*fp32", "lse_ptr": "*fp32", "cu_q_ptr": "*i32", "seq_lens_ptr": "*i32", "table_ptr": "*i32"}
sig, const = cr._signature(k, ptrs, {"scale_log2"}, set())
const.update(NUM_Q_HEADS=16, GROUP=16, D=256, PAGE=16, TILE_N=tile, STAGES=st, SAME_STRIDES=True, PAGES_AHEAD=True, MULTI_BLOCK=False, REGS=regs)
divisible = [i for i, n in enumerate(k.arg_names) if n.startswith("stride") or n.endswith("_ptr")]
attrs = {(i,): [["tt.divisibility", 16]] for i in divisible if sig[k.arg_names[i]] != "constexpr"}
c = triton.compile(GluonASTSource(fn=k, signature=sig, constexprs=const, attrs=attrs), target=cr.TARGET, options={"num_warps": 4, "num_stages": 1})
open(f"/tmp/ws_{tile}_{st}.ptx", "w").write(c.asm["ptx"])
with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
    f.write(c.asm["cubin"]); f.flush()
    usage = subprocess.run([str(cr.CUOBJDUMP), "--dump-resource-usage", f.name], capture_output=True, text=True).stdout
    sass = subprocess.run([str(cr.CUOBJDUMP), "--dump-sass", f.name], capture_output=True, text=True).stdout
open(f"/tmp/ws_{tile}_{st}.sass", "w").write(sass)
print(usage.strip().splitlines()[-1][:200], "smem", c.metadata.shared, "serial", cr._wgmma_serialized(c.asm["ptx"]))
print("BAR", re.findall(r"BAR\.\w+[^;]*", sass)[:12])
