"""v43: build ws_fp8.py's kernel for sm90 offline and report registers, spills, shared memory, serialized wgmma and the
setmaxnreg / barrier instructions, into /tmp/ws_TILE_N_STAGES_V_SLOTS_CONSUMER_REGS_PRODUCER_REGS.{ptx,sass}.
The kernel's flags come from the environment (0 or 1): AHEAD (PAGES_AHEAD, default 1), CC (CONSUMER_CONVERTS), QC
(Q_IN_CONSUMER), COMBINE. Usage: [AHEAD=.. CC=.. QC=.. COMBINE=..] compile_ws.py TILE_N STAGES V_SLOTS CONSUMER_REGS
PRODUCER_REGS"""
import os
import re
import subprocess
import sys
import tempfile

os.environ["TRITON_INTERPRET"] = "0"
sys.path.insert(0, "scripts")
sys.path.insert(0, "results/v43/scripts")
import compile_report as cr  # noqa: E402
import triton  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402
from ws_fp8 import ws_fp8_kernel  # noqa: E402

tile, stages, slots, creg, preg = (int(a) for a in sys.argv[1:6])
k = ws_fp8_kernel
ptrs = {"q_ptr": "*bf16", "k_ptr": "*fp8e4nv", "v_ptr": "*fp8e4nv", "part_ptr": "*fp32", "lse_ptr": "*fp32",
        "cu_q_ptr": "*i32", "seq_lens_ptr": "*i32", "table_ptr": "*i32"}
sig, const = cr._signature(k, ptrs, {"softmax_scale", "k_scale_value", "v_scale_value"}, {"k_scale_ptr", "v_scale_ptr"})
const.update(NUM_Q_HEADS=16, GROUP=16, D=256, PAGE=16, TILE_N=tile, STAGES=stages, V_SLOTS=slots, SAME_STRIDES=True,
             K_SCALE_TENSOR=False, V_SCALE_TENSOR=False, CONSUMER_REGS=creg, PRODUCER_REGS=preg,
             PAGES_AHEAD=bool(int(os.environ.get("AHEAD", "1"))),
             CONSUMER_CONVERTS=bool(int(os.environ.get("CC", "0"))), Q_IN_CONSUMER=bool(int(os.environ.get("QC", "0"))),
             COMBINE=bool(int(os.environ.get("COMBINE", "0"))), SHARED_V16=bool(int(os.environ.get("SV", "0"))))
divisible = [i for i, n in enumerate(k.arg_names) if n.startswith("stride") or n.endswith("_ptr")]
attrs = {(i,): [["tt.divisibility", 16]] for i in divisible if sig[k.arg_names[i]] != "constexpr"}
c = triton.compile(GluonASTSource(fn=k, signature=sig, constexprs=const, attrs=attrs), target=cr.TARGET,
                   options={"num_warps": 4, "num_stages": 1})
name = f"/tmp/ws_{tile}_{stages}_{slots}_{creg}_{preg}"
open(name + ".ptx", "w").write(c.asm["ptx"])
with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
    f.write(c.asm["cubin"])
    f.flush()
    usage = subprocess.run([str(cr.CUOBJDUMP), "--dump-resource-usage", f.name], capture_output=True, text=True).stdout
    sass = subprocess.run([str(cr.CUOBJDUMP), "--dump-sass", f.name], capture_output=True, text=True).stdout
open(name + ".sass", "w").write(sass)
print(usage.strip().splitlines()[-1][:200])
print("smem", c.metadata.shared, "serial", cr._wgmma_serialized(c.asm["ptx"]))
print("setmaxnreg", sorted(set(re.findall(r"setmaxnreg\.\w+\.sync\.aligned\.u32 \d+", c.asm["ptx"]))))
print("STL", len(re.findall(r"\bSTL", sass)), "LDL", len(re.findall(r"\bLDL", sass)),
      {op: len(re.findall(rf"\b{op}\b", sass)) for op in ("HGMMA", "QGMMA", "BAR", "SYNCS", "LDGSTS")})
