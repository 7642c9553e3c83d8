"""v42: build the carveout probes under build/v42 (ignored; carry it to the device): two copies each of v41's
unified keys-as-rows and warpgroup-MMA kernel files (commit BASE), with their relative imports made absolute, so
that each copy loads its own CUfunction. In the `_carve` copies the launcher, after each launch, sets the function's
preferred shared-memory carveout (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) to the least configuration
that holds the programs per SM the launch needs (its programs over the SMs, rounded up, each with its shared memory
and the 1 KB the driver reserves per block), so the rest of the SM's 256 KB stays L1. The H100 ran the 64-row
keys-as-rows form at the largest configuration, 233,472 B, with 183,552 B used (ncu, perf-notes v42 item 4),
leaving ~23 KB of L1 for 22 KB of spills per program, a third of whose reloads missed L1 (item 7).
Usage: make_carveout.py (from the repository root)"""
import sys
from pathlib import Path
sys.path.insert(0, "scripts")
from variant_source import absolute_imports, git_show, replaced  # noqa: E402

OUT = Path("build/v42")
BASE = "ac91ab5"  # v41's last commit
GRID = "[(seq_lens.shape[0] * q_blocks, num_kv_heads, splits)]("
KERNELS = {"ukr": ("pagedattn/ops/unified_keys_rows.py", "unified_keys_rows_kernel" + GRID),
           "vw": ("pagedattn/ops/verify_wgmma.py", "verify_wgmma_kernel" + GRID)}
PROGRAMS = "seq_lens.shape[0] * q_blocks * num_kv_heads * splits"
CALL_END = "    )\n    if splits > 1:\n        launch_merge(part, lse, out)"

CARVE = '''

import ctypes  # noqa: E402
from pagedattn.device import DeviceInfo  # noqa: E402, F811

_CUDA = ctypes.CDLL("libcuda.so.1")
SMEM_PER_SM = 233472  # the largest shared-memory configuration of an sm90 SM, bytes
CONFIGS_KB = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)  # an sm90 SM's shared-memory configurations
CARVEOUT_ATTRIBUTE = 9  # CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, percent of SMEM_PER_SM


def _carve(compiled, programs: int, sms: int) -> None:
    """Prefer the least shared-memory configuration that holds cdiv(programs, sms) programs per SM of `compiled`'s
    shared memory: a percent whose bytes fall above the next smaller configuration, which the driver rounds up."""
    need = -(-programs // sms) * (compiled.metadata.shared + 1024)
    config = next(kb * 1024 for kb in CONFIGS_KB if kb * 1024 >= need)
    percent = 100 * config // SMEM_PER_SM
    rc = _CUDA.cuFuncSetAttribute(ctypes.c_void_p(compiled.function), CARVEOUT_ATTRIBUTE, percent)
    assert rc == 0, rc
'''


def carved(text: str, launch: str) -> str:
    carve = f"    )\n    _carve(compiled, {PROGRAMS}, DeviceInfo.current(q.device.index).num_sms)\n"
    return replaced(text, (launch, "compiled = " + launch), (CALL_END, carve + CALL_END[6:]),
                    ("\n\n\ndef launch_", CARVE + "\n\ndef launch_"))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (path, launch) in KERNELS.items():
        base = absolute_imports(git_show(f"{BASE}:{path}"))
        (OUT / f"{name}_copy.py").write_text(base)
        (OUT / f"{name}_carve.py").write_text(carved(base, launch))


if __name__ == "__main__":
    main()
