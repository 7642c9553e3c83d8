"""Compile the kernels for sm90 (or another `TARGET`) on a machine without a GPU and report what the compiler did.

For each (kernel, shape, profile) it prints registers per thread, spilled bytes, shared memory,
whether ptxas serialized the wgmma instructions (its C7514/C7515 notes, which Triton does not show),
the fewest cp.async groups a KV loop keeps in flight while it waits (`waits`), and counts of the
SASS instructions that tell the story: HGMMA / QGMMA (Hopper matrix unit, 16-bit / FP8 operands),
HMMA (older mma.sync path), LDGSTS (cp.async global->shared), LDG (global->register), STS/LDS
(shared memory traffic), F2F/F2FP (conversions), CCTL (cache control: the split merge's L2 discards). Costs no device time: Triton ships ptxas and
cuobjdump.

    TRITON_INTERPRET=0 python3 scripts/compile_report.py
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "0"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from triton.language import target_info  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402

from pagedattn.ops.common import merge_shape, merge_splits_kernel, whole_lines  # noqa: E402
from pagedattn.ops.sparse import sparse_attention_kernel  # noqa: E402
from pagedattn.ops.sparse_exchange import sparse_exchange_kernel  # noqa: E402
from pagedattn.ops.sparse_keys_rows import keys_rows_constants, sparse_keys_rows_kernel  # noqa: E402
from pagedattn.ops.unified import unified_attention_kernel  # noqa: E402
from pagedattn.ops.unified_keys_rows import unified_keys_rows_kernel  # noqa: E402
from pagedattn.ops.verify_wgmma import verify_wgmma_kernel  # noqa: E402
from pagedattn.device import KNOWN_DEVICES  # noqa: E402
from pagedattn.profiles.select import keys_rows_register_cap  # noqa: E402
from pagedattn.profiles.types import LaunchProfile  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)  # reassign to build for another GPU (e.g. GPUTarget("cuda", 100, 32))
CUOBJDUMP = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
PTXAS = CUOBJDUMP.with_name("ptxas")


def _build_target():
    return TARGET


# Kernels that ask Triton for the compute capability (`cuda_capability_geq`, ops/common.py) see the
# target being built for, not this machine's GPU (none on a CPU machine).
_build_target.__triton_builtin__ = True  # as Triton marks the function it replaces
target_info.current_target = _build_target

SASS_OPS = ("HGMMA", "QGMMA", "HMMA", "LDGSTS", "LDG", "STS", "LDS", "LDSM", "F2FP", "F2F", "MUFU", "BAR", "SYNCS",
            "UTMALDG", "CCTL")
TYPES = {"bf16": "*bf16", "fp16": "*fp16", "fp8": "*fp8e4nv"}


def _signature(kernel, pointer_types: dict, float_args: set, none_args: set) -> tuple[dict, dict]:
    signature, constexprs = {}, {}
    for name in kernel.arg_names:
        if name in none_args:
            signature[name] = "constexpr"
            constexprs[name] = None
        elif name in pointer_types:
            signature[name] = pointer_types[name]
        elif name in float_args:
            signature[name] = "fp32"
        elif name.isupper():
            signature[name] = "constexpr"
        else:
            signature[name] = "i32"
    return signature, constexprs


def _pointer_types(q: str, kv: str, kernel: str, fp8_as_bytes: bool = False) -> dict:
    """Pointer argument types every unified (or sparse) kernel shares: q/out in q's dtype, K/V pages
    in kv's (FP8 pages as uint8 for the Triton kernels, as `ops.common.kernel_cache` passes them),
    fp32 partials and lse, int32 metadata (sequence tables, or resolved token ids)."""
    metadata = ("cu_q_ptr", "seq_lens_ptr", "table_ptr") if kernel == "unified" else ("tokens_ptr",)
    pages = "*u8" if fp8_as_bytes and kv == "fp8" else TYPES[kv]
    return {"q_ptr": TYPES[q], "k_ptr": pages, "v_ptr": pages, "out_ptr": TYPES[q], "part_ptr": "*fp32",
            "lse_ptr": "*fp32", **dict.fromkeys(metadata, "*i32")}


def compile_unified(q: str, kv: str, group: int, head: int, page: int, profile: LaunchProfile, split: bool):
    ptrs = _pointer_types(q, kv, "unified", fp8_as_bytes=True)
    floats = {"k_scale_value", "v_scale_value", "softmax_scale", "softcap"}
    sig, const = _signature(unified_attention_kernel, ptrs, floats, {"sinks_ptr", "k_scale_ptr", "v_scale_ptr"})
    const.update(NUM_Q_HEADS=group, GROUP=group, HEAD=head, HEAD_PAD=head, PAGE=page, BLOCK_M=profile.block_m,
                 BLOCK_Q=profile.block_q(group), TILE_N=profile.tile_n, SPLIT=split, KV_MAJOR=profile.kv_major,
                 ADDRESSES_AHEAD=profile.addresses_ahead,
                 HAS_WINDOW=False, HAS_SOFTCAP=False, HAS_SINKS=False, KV_FP8=kv == "fp8", K_SCALE_TENSOR=False,
                 V_SCALE_TENSOR=False)
    return _compile(unified_attention_kernel, sig, const, profile.num_warps, profile.num_stages)


def compile_verify_wgmma(q: str, kv: str, group: int, head: int, page: int, profile: LaunchProfile, split: bool,
                         multi_block: bool = False, sass: bool = False):
    ptrs = _pointer_types(q, kv, "unified")
    sig, const = _signature(verify_wgmma_kernel, ptrs, {"scale_log2", "softmax_scale", "k_scale_value", "v_scale_value"},
                            {"k_scale_ptr", "v_scale_ptr"})
    const.update(NUM_Q_HEADS=group, GROUP=group, D=head, PAGE=page, TILE_N=profile.tile_n, STAGES=profile.num_stages,
                 SPLIT=split, SAME_STRIDES=True, KV_FP8=kv == "fp8", K_SCALE_TENSOR=False, V_SCALE_TENSOR=False,
                 PAGES_AHEAD=profile.addresses_ahead, MULTI_BLOCK=multi_block)
    return _compile(verify_wgmma_kernel, sig, const, profile.num_warps, 1, source=GluonASTSource, sass=sass)


def compile_sparse(q: str, kv: str, group: int, head: int, page: int, profile: LaunchProfile, split: bool):
    ptrs = _pointer_types(q, kv, "sparse", fp8_as_bytes=True)
    floats = {"k_scale_value", "v_scale_value", "softmax_scale"}
    sig, const = _signature(sparse_attention_kernel, ptrs, floats, {"counts_ptr", "k_scale_ptr", "v_scale_ptr"})
    const.update(NUM_Q_HEADS=group, GROUP=group, HEAD=head, HEAD_PAD=head, PAGE=page, BLOCK_M=profile.block_m,
                 TILE_N=profile.tile_n, SPLIT=split, KV_MAJOR=profile.kv_major, ADDRESSES_AHEAD=profile.addresses_ahead,
                 HAS_COUNTS=False, KV_FP8=kv == "fp8",
                 K_SCALE_TENSOR=False, V_SCALE_TENSOR=False)
    return _compile(sparse_attention_kernel, sig, const, profile.num_warps, profile.num_stages)


def compile_sparse_exchange(q: str, kv: str, group: int, head: int, page: int, profile: LaunchProfile, split: bool,
                            dense_pages: bool = True, sass: bool = False):
    ptrs = _pointer_types(q, kv, "sparse")
    floats = {"k_scale_value", "v_scale_value", "softmax_scale"}
    sig, const = _signature(sparse_exchange_kernel, ptrs, floats, {"counts_ptr", "k_scale_ptr", "v_scale_ptr"})
    const.update(NUM_Q_HEADS=group, GROUP=group, D=head, PAGE=page, TILE_N=profile.tile_n, STAGES=profile.num_stages,
                 SPLIT=split, HAS_COUNTS=False, KV_FP8=kv == "fp8", K_SCALE_TENSOR=False, V_SCALE_TENSOR=False,
                 DENSE_PAGES=dense_pages)
    return _compile(sparse_exchange_kernel, sig, const, profile.num_warps, 1, source=GluonASTSource, sass=sass)


def compile_sparse_keys_rows(q: str, group: int, head: int, page: int, profile: LaunchProfile, split: bool,
                             dense_pages: bool = True, sass: bool = False):
    ptrs = _pointer_types(q, "fp8", "sparse")
    floats = {"k_scale_value", "v_scale_value", "softmax_scale"}
    sig, const = _signature(sparse_keys_rows_kernel, ptrs, floats, {"counts_ptr", "k_scale_ptr", "v_scale_ptr"})
    const.update(keys_rows_constants(group, group, head, page, q == "bf16", 2 if split else 1, dense_pages),
                 STAGES=profile.num_stages, HAS_COUNTS=False, K_SCALE_TENSOR=False, V_SCALE_TENSOR=False)
    return _compile(sparse_keys_rows_kernel, sig, const, profile.num_warps, 1, source=GluonASTSource, sass=sass)


def compile_unified_keys_rows(q: str, group: int, head: int, page: int, profile: LaunchProfile, split: bool,
                              multi_block: bool = False, sass: bool = False):
    ptrs = _pointer_types(q, "fp8", "unified")
    floats = {"k_scale_value", "v_scale_value", "softmax_scale"}
    sig, const = _signature(unified_keys_rows_kernel, ptrs, floats, {"k_scale_ptr", "v_scale_ptr"})
    const.update(NUM_Q_HEADS=group, GROUP=group, HN=profile.block_m, D=head, PAGE=page, TILE_N=profile.tile_n,
                 STAGES=profile.num_stages, SPLIT=split, SAME_STRIDES=True, K_SCALE_TENSOR=False, V_SCALE_TENSOR=False,
                 MULTI_BLOCK=multi_block)
    return _compile(unified_keys_rows_kernel, sig, const, profile.num_warps, 1, source=GluonASTSource, sass=sass,
                    maxnreg=keys_rows_register_cap(profile, head, KNOWN_DEVICES["NVIDIA_H200"]))


def compile_merge(splits: int, heads: int, head: int, sass: bool = False):
    """The split merge as `launch_merge` launches it on an sm80+ GPU (`merge_shape`; DISCARD with whole lines)."""
    head_pad = triton.next_power_of_2(head)
    columns, chunk, warps = merge_shape(splits, head_pad)
    sig, const = _signature(merge_splits_kernel, {"part_ptr": "*fp32", "lse_ptr": "*fp32", "out_ptr": "*bf16",
                                                  "cu_q_ptr": "*i32"}, set(), set())
    const.update(NUM_HEADS=heads, HEAD=head, HEAD_PAD=head_pad, COLUMNS=columns, SPLIT_CHUNK=chunk,
                 DISCARD=whole_lines(columns), ROWS_BY_SEQUENCE=False)
    return _compile(merge_splits_kernel, sig, const, warps, 1, sass=sass)


def _compile(kernel, sig, const, num_warps: int, num_stages: int, source=ASTSource, sass: bool = False,
             maxnreg: int | None = None) -> dict:
    """Build for sm90 and report; `source` is the front end (`ASTSource`, or Gluon's for a Gluon
    kernel); `sass`: the report keeps the SASS text too; `maxnreg`: ptxas' register cap, as the
    launcher passes it. Strides and pointers are declared 16-divisible, as Triton specialises them
    at launch."""
    divisible = [i for i, n in enumerate(kernel.arg_names) if n.startswith("stride") or n.endswith("_ptr")]
    attrs = {(i,): [["tt.divisibility", 16]] for i in divisible if sig[kernel.arg_names[i]] != "constexpr"}
    src = source(fn=kernel, signature=sig, constexprs=const, attrs=attrs)
    options = {"num_warps": num_warps, "num_stages": num_stages} | ({"maxnreg": maxnreg} if maxnreg else {})
    compiled = triton.compile(src, target=TARGET, options=options)
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(compiled.asm["cubin"])
        f.flush()
        sass_text = subprocess.run([str(CUOBJDUMP), "--dump-sass", f.name], capture_output=True, text=True).stdout
        usage = subprocess.run([str(CUOBJDUMP), "--dump-resource-usage", f.name], capture_output=True, text=True).stdout
    regs = re.search(r"REG:(\d+)", usage)
    stack = re.search(r"STACK:(\d+)", usage)
    counts = {op: len(re.findall(rf"\b{op}(\.[A-Z0-9_.]+)?\b", sass_text)) for op in SASS_OPS}
    counts["narrow_copies"] = len(re.findall(r"\bLDGSTS(?![.A-Z0-9_]*\.128\b)", sass_text))  # cp.async under 16 bytes
    return {"regs": int(regs.group(1)) if regs else None, "stack": int(stack.group(1)) if stack else None,
            "smem": compiled.metadata.shared, "serial": _wgmma_serialized(compiled.asm["ptx"]),
            "waits": loop_waits(compiled.asm["ttgir"]), **counts, **({"sass": sass_text} if sass else {})}


def hot_loop(sass: str, every_branch: bool = False) -> tuple[int, dict]:
    """The SASS instructions of a kernel's KV loop on its hot path (the body of its longest backward
    branch without the longest forward branch inside it, the rare rescale; with every_branch, without
    any forward branch's body inside it: a loop with a rare branch per tile, perf-notes v39): their
    count and their count by opcode (perf-notes v25 item 1)."""
    lines = [line for line in sass.splitlines() if re.match(r"\s+/\*[0-9a-f]{4,}\*/", line)]

    def addr(line):
        return int(re.match(r"\s+/\*([0-9a-f]+)\*/", line).group(1), 16)

    back, fwd = [], []
    for line in lines:
        m = re.search(r"BRA (0x[0-9a-f]+)", line)
        if m:
            target = int(m.group(1), 16)
            (back if target < addr(line) else fwd).append((min(target, addr(line)), max(target, addr(line))))
    lo, hi = max(back, key=lambda r: r[1] - r[0])
    inner = [r for r in fwd if lo < r[0] < hi and r[1] < hi]
    skipped = inner if every_branch else [max(inner, key=lambda r: r[1] - r[0])] if inner else []
    body = [line for line in lines if lo <= addr(line) <= hi and not any(f0 < addr(line) < f1 for f0, f1 in skipped)]
    ops = collections.Counter(re.sub(r"^\s+/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?", "", line).split()[0].split(".")[0]
                              for line in body)
    return len(body), dict(ops.most_common())


def loop_waits(ttgir: str) -> int | None:
    """The smallest `ttg.async_wait {num = N}` inside a KV loop (`scf.for`): how many cp.async
    groups a loop step may leave in flight while it waits. 0 inside the loop means every K/V copy
    issued so far must land first (Triton 3.6 with the page table in the loop, perf-notes v6);
    None: no wait in any loop (nothing pipelined through cp.async)."""
    found, depth = [], 0
    for line in ttgir.splitlines():
        if depth == 0 and " scf.for " in line and line.rstrip().endswith("{"):
            depth = 1
            continue
        if depth:
            depth += line.count("{") - line.count("}")
            wait = re.search(r"ttg\.async_wait .*\{num = (\d+) : i32\}", line)
            if wait:
                found.append(int(wait.group(1)))
    return min(found) if found else None


def _wgmma_serialized(ptx: str) -> bool:
    """ptxas's C7515 warning: every wgmma waits for the previous one (a wait per HGMMA in the loop;
    seen when the page table was loaded with other=0, perf-notes v5). Triton does not show it."""
    with tempfile.TemporaryDirectory() as d:
        Path(d, "k.ptx").write_text(ptx)
        log = subprocess.run([str(PTXAS), "-arch=sm_90a", "-v", "-o", str(Path(d, "k.cubin")), str(Path(d, "k.ptx"))],
                             capture_output=True, text=True).stderr
    return "wgmma.mma_async instructions are serialized" in log


def main() -> None:
    rows = []
    for kv in ("bf16", "fp8"):
        for kv_major in (False, True):
            for tile, warps, stages in ((32, 4, 3), (64, 4, 3), (64, 8, 3)):
                prof = LaunchProfile(64, tile, 16, warps, stages, kv_major)
                rows.append((f"unified verify 16:1 D256 {kv}", prof, compile_unified("bf16", kv, 16, 256, 16, prof, True)))
        for tile, stages in ((32, 4), (16, 4)):
            prof = LaunchProfile(64, tile, 12, 4, stages, addresses_ahead=True)
            rows.append((f"unified verify 16:1 D256 {kv}", prof, compile_unified("bf16", kv, 16, 256, 16, prof, True)))
    for kv, stages in (("bf16", 4), ("bf16", 5), ("fp8", 4), ("fp8", 6)):
        prof = LaunchProfile(64, 16, 13, 4, stages, warpgroup_mma=True)
        rows.append((f"unified verify 16:1 D256 {kv}", prof, compile_verify_wgmma("bf16", kv, 16, 256, 16, prof, True)))
    for kv_major in (False, True):
        for tile, warps, stages in ((64, 4, 3), (128, 4, 3)):
            prof = LaunchProfile(16, tile, 1, warps, stages, kv_major)
            rows.append(("unified decode 4:1 D128 bf16", prof, compile_unified("bf16", "bf16", 4, 128, 16, prof, False)))
    for kv in ("bf16", "fp8"):
        for kv_major in (False, True):
            prof = LaunchProfile(16, 64, 1, 4, 3, kv_major)
            rows.append((f"sparse TP1 12:1 D256 {kv}", prof, compile_sparse("bf16", kv, 12, 256, 16, prof, False)))
    for kv in ("bf16", "fp8"):
        for tile, stages in ((32, 2), (16, 2), (16, 3)):
            prof = LaunchProfile(16, tile, 1, 2, stages, shared_exchange=True)
            rows.append((f"sparse TP2 12:1 D256 {kv}", prof, compile_sparse_exchange("bf16", kv, 12, 256, 16, prof, False)))
    for group in (3, 6, 12):
        prof = LaunchProfile(16, 64, 1, 4, 2, keys_as_rows=True)
        rows.append((f"sparse {group}:1 D256 fp8", prof, compile_sparse_keys_rows("bf16", group, 256, 16, prof, False)))
    for block_m, stages in ((16, 2), (16, 3), (64, 2)):
        prof = LaunchProfile(block_m, 128, 8, 8, stages, keys_as_rows=True)
        rows.append(("unified 16:1 D256 fp8", prof, compile_unified_keys_rows("bf16", 16, 256, 16, prof, True)))
    keys = ["regs", "stack", "smem", "serial", "waits", *SASS_OPS]
    print(f"{'case':32s} {'profile':40s} " + " ".join(f"{k:>6s}" for k in keys))
    for name, prof, info in rows:
        print(f"{name:32s} {prof.short():40s} " + " ".join(f"{str(info[k]):>6s}" for k in keys))


if __name__ == "__main__":
    main()
