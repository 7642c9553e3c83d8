"""Offline sm90 compiles (no GPU needed): structure the speed of the KV loops depends on.

The compiles run in a child process with the interpreter off (`scripts/compile_report.py`), since
this process imported the kernels for Triton's interpreter.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _child_json_lines(*args: str) -> list:
    """Run `python3 args...` in a child process with the interpreter off (it builds kernels for sm90
    and prints one JSON value per line); the values."""
    env = dict(os.environ, TRITON_INTERPRET="0", PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    return [json.loads(line) for line in run.stdout.strip().splitlines()]


def _compile_report(program: str):
    """Run `program` (it builds kernels through scripts/compile_report.py and prints JSON last); its JSON."""
    return _child_json_lines("-c", program)[-1]

_PROGRAM = """
import json, sys
sys.path.insert(0, "scripts")
import compile_report as cr
from pagedattn.profiles.types import LaunchProfile
waits = {}
for ahead in (False, True):
    verify = LaunchProfile(64, 32, 12, 4, 3, addresses_ahead=ahead)
    waits[f"unified {ahead}"] = cr.compile_unified("bf16", "bf16", 16, 256, 16, verify, True)["waits"]
    sparse = LaunchProfile(16, 32, 1, 4, 3, addresses_ahead=ahead)
    waits[f"sparse {ahead}"] = cr.compile_sparse("bf16", "fp8", 12, 256, 16, sparse, False)["waits"]
print(json.dumps(waits))
"""


def test_addresses_ahead_keeps_two_kv_tiles_in_flight_at_three_stages():
    """Why `addresses_ahead` exists (ops/common.py): with the page-table entries (sparse: token ids)
    loaded inside the loop, Triton 3.6's pipeliner waits for every cp.async group mid-loop (0 left
    in flight), so 3 stages keep one K/V tile in flight; read a step ahead, the loop waits with
    num_stages - 1 = 2 groups still in flight. Should a Triton upgrade change the first half, the
    flag may have become unnecessary: re-measure it."""
    waits = _compile_report(_PROGRAM)
    assert waits == {"unified False": 0, "sparse False": 0, "unified True": 2, "sparse True": 2}


def test_gluon_verify_probe_compiles_for_sm90_without_spills():
    """The Gluon mma.sync probe (scripts/gluon_verify_probe.py, perf-notes v7 item 10, v8) keeps
    building: FA2's layout at 16-key tiles, 64 mma.sync per tile per warp (QK^T 2 x 16, P.V 32 x 1),
    no stack. A Triton upgrade that changes the Gluon API or the layout's cost fails here before
    anyone spends device time on it."""
    builds = {(b["variant"], b["tile_n"], b["stages"]): b
              for b in _child_json_lines("scripts/gluon_verify_probe.py", "compile", "v1")}
    n16 = builds[("v1", 16, 3)]
    assert (n16["HMMA"], n16["HGMMA"], n16["stack"]) == (64, 0, 0) and n16["regs"] <= 255
    assert n16["smem"] == 3 * 2 * 16 * 256 * 2  # STAGES x (K, V) x 16 keys x D x bf16


_WGMMA_PROGRAM = """
import json, sys
sys.path.insert(0, "scripts")
import compile_report as cr
from pagedattn.profiles.select import smem_bytes
from pagedattn.profiles.types import LaunchProfile, ShapeKey
rows = []
for q, kv, head, tile, stages, split, ahead, multi in (
        ("bf16", "bf16", 256, 16, 4, True, False, False), ("bf16", "bf16", 256, 16, 5, True, True, False),
        ("bf16", "bf16", 256, 16, 3, False, False, False), ("fp16", "fp16", 128, 32, 3, True, True, False),
        ("bf16", "bf16", 64, 64, 6, True, False, False), ("bf16", "fp8", 256, 16, 6, True, False, False),
        ("bf16", "fp8", 256, 16, 4, True, True, False), ("fp16", "fp8", 64, 32, 4, False, False, False),
        ("bf16", "bf16", 256, 16, 5, True, True, True), ("bf16", "fp8", 256, 16, 4, True, False, True)):
    profile = LaunchProfile(64, tile, 12, 4, stages, addresses_ahead=ahead, warpgroup_mma=True)
    key = ShapeKey("unified", kv, head, 16, "verify", 20, 4, 80, 1, 32768)
    build = cr.compile_verify_wgmma(q, kv, 16, head, 16, profile, split, multi_block=multi)
    rows.append(build | {"estimate": smem_bytes(profile, key), "fp8": kv == "fp8"})
print(json.dumps(rows))
"""


def test_library_wgmma_kernel_builds_unserialized_and_as_the_estimate_says():
    """ops/verify_wgmma.py for sm90 at the profiles the tuner may pick (16-bit and FP8 pages): matrix products on wgmma
    only, none serialized by ptxas (a wgmma left in flight across the loop's back-edge or while O is
    rescaled serializes all of them: C7514/C7515), no stack, at most 255 registers (two programs
    per SM need <= 256 at 128 threads), and shared memory exactly as `select.smem_bytes` estimates
    (the split rule counts programs per SM with it, and reading the page table a step ahead adds
    none). FP8 pages' scores run on FP8 wgmma (QGMMA), P.V on fp16 wgmma (HGMMA); 16-bit pages use
    HGMMA only. The same holds for the several-blocks build (MULTI_BLOCK)."""
    for build in _compile_report(_WGMMA_PROGRAM):
        assert build["HMMA"] == 0 and build["HGMMA"] > 0 and build["serial"] is False and build["stack"] == 0
        assert (build["QGMMA"] > 0) == build["fp8"]
        assert build["regs"] <= 255
        assert build["smem"] == build["estimate"]


_EXCHANGE_PROGRAM = """
import json, sys
sys.path.insert(0, "scripts")
import compile_report as cr
from pagedattn.profiles.select import smem_bytes
from pagedattn.profiles.types import LaunchProfile, ShapeKey
rows = []
for q, kv, group, head, tile, stages, split, dense in (
        ("bf16", "bf16", 12, 256, 32, 2, False, True), ("bf16", "bf16", 3, 256, 16, 3, True, False),
        ("fp16", "fp16", 16, 64, 64, 2, True, True), ("bf16", "fp8", 12, 256, 32, 2, False, True),
        ("fp16", "fp8", 6, 128, 16, 4, True, False), ("bf16", "fp8", 5, 64, 16, 2, False, True)):
    profile = LaunchProfile(16, tile, 2 if split else 1, 2, stages, shared_exchange=True)
    key = ShapeKey("sparse", kv, head, group, "decode", 8192, 1, 8192, 1, 2051)
    build = cr.compile_sparse_exchange(q, kv, group, head, 16, profile, split, dense)
    rows.append(build | {"estimate": smem_bytes(profile, key)})
print(json.dumps(rows))
"""


def test_sparse_exchange_kernel_builds_without_spills_and_as_the_estimate_says():
    """ops/sparse_exchange.py for sm90 at the profiles the tuner may pick (16-bit and FP8 pages, head
    sizes 64-256, splits or not, dense pages or not): matrix products on mma.sync, no stack, at most
    255 registers, only 16-byte copies, and shared memory exactly as `select.smem_bytes` estimates
    (the split rule and the tuner's pruning count programs per SM with it)."""
    for build in _compile_report(_EXCHANGE_PROGRAM):
        assert build["HMMA"] > 0 and build["HGMMA"] == 0 and build["stack"] == 0
        assert build["narrow_copies"] == 0  # 16-byte copies: the row offsets' alignment is declared (_wide_product)
        assert build["regs"] <= 255
        assert build["smem"] == build["estimate"]


_KEYS_ROWS_PROGRAM = """
import json, sys
sys.path.insert(0, "scripts")
import compile_report as cr
from pagedattn.profiles.select import smem_bytes
from pagedattn.profiles.types import LaunchProfile, ShapeKey
rows = []
for q, group, head, stages, split, dense in (("bf16", 3, 256, 2, False, True), ("bf16", 12, 256, 2, True, False),
                                             ("fp16", 6, 128, 3, True, True), ("fp16", 16, 256, 2, False, True)):
    profile = LaunchProfile(16, 64, 2 if split else 1, 4, stages, keys_as_rows=True)
    key = ShapeKey("sparse", "fp8", head, group, "decode", 8192, 1, 8192, 1, 2051)
    build = cr.compile_sparse_keys_rows(q, group, head, 16, profile, split, dense)
    rows.append(build | {"estimate": smem_bytes(profile, key), "group": group, "heads": max(8, 1 << (group - 1).bit_length()),
                         "head": head, "terms": 2 if q == "bf16" else 3})
print(json.dumps(rows))
"""


def test_sparse_keys_rows_kernel_builds_without_spills_within_the_estimate():
    """ops/sparse_keys_rows.py for sm90 (bf16 and fp16 q, head sizes 128 and 256, groups 3-16,
    splits or not, dense pages or not): scores on FP8 wgmma (QGMMA: K is never converted), P.V on
    fp16 wgmma, no mma.sync, none serialized, no stack; at most 168 registers with bf16 q (152-154 at
    16 heads: three programs of one warpgroup fit an SM, perf-notes v13 item 8) and shared memory at most
    `select.smem_bytes`, which counts a third q term and 1 KB of alignment beyond the build."""
    for build in _compile_report(_KEYS_ROWS_PROGRAM):
        assert build["QGMMA"] > 0 and build["HGMMA"] > 0 and build["HMMA"] == 0
        assert build["serial"] is False and build["stack"] == 0
        assert build["narrow_copies"] == 0  # 16-byte copies (ops/sparse_exchange.py's _wide_product)
        third_term = (3 - build["terms"]) * build["heads"] * build["head"]
        assert build["smem"] <= build["estimate"] <= build["smem"] + third_term + 1024
        if build["terms"] == 2:
            assert build["regs"] <= 168


_UNIFIED_KEYS_ROWS_PROGRAM = """
import json, sys
sys.path.insert(0, "scripts")
import compile_report as cr
from pagedattn.device import KNOWN_DEVICES
from pagedattn.profiles.select import MAX_PROGRAMS_PER_SM, programs_by_registers, smem_bytes
from pagedattn.profiles.types import LaunchProfile, ShapeKey
rows = []
smem_per_sm = KNOWN_DEVICES["NVIDIA_H200"].smem_per_block
for q, group, block_m, tile, stages, split, multi in (
        ("bf16", 16, 16, 128, 2, True, False), ("fp16", 16, 16, 128, 3, False, False),
        ("bf16", 8, 32, 128, 3, True, False), ("bf16", 16, 64, 128, 2, True, False),
        ("fp16", 24, 64, 128, 2, False, False), ("bf16", 16, 16, 64, 2, True, False),
        ("fp16", 16, 16, 64, 3, False, False), ("bf16", 8, 32, 64, 2, True, False),
        ("bf16", 16, 64, 128, 2, True, True), ("bf16", 16, 16, 64, 2, True, True)):
    profile = LaunchProfile(block_m, tile, 2 if split else 1, tile // 16, stages, keys_as_rows=True)
    key = ShapeKey("unified", "fp8", 256, group, "verify", 20, block_m // group, 20 * block_m // group, 1, 32768)
    build = cr.compile_unified_keys_rows(q, group, 256, 16, profile, split, multi_block=multi)
    rows.append(build | {"estimate": smem_bytes(profile, key), "block_m": block_m, "tile": tile, "multi": multi,
                         "by_smem": min(smem_per_sm // build["smem"], MAX_PROGRAMS_PER_SM),
                         "by_regs": programs_by_registers(build["regs"], profile.num_warps)})
print(json.dumps(rows))
"""


def test_unified_keys_rows_kernel_builds_unserialized_and_as_the_estimate_says():
    """ops/unified_keys_rows.py for sm90 (bf16 and fp16 q, 16 to 64 packed rows, 2 and 3 stages,
    splits or not): scores on FP8 wgmma (QGMMA: K is never converted), P.V on fp16 wgmma, no
    mma.sync, none serialized, shared memory exactly as `select.smem_bytes` estimates. The scores
    take 8 QGMMA per step at 16 packed rows (q's two e4m3 terms in one product, perf-notes v51 item
    1) and 16 above (one product per term), so a change that moves the packing fails here. The 128-key
    form: up to 32 packed rows no stack (157-214 registers with bf16 q); at 64 the build holds 255
    registers and spills at most 104 bytes (104 with splits since v27's partial rows stored from the
    wgmma registers, 80 before; 48 without; perf-notes v17 item 4; v16's 112 before the row sums
    per key pair). The 64-key form (one warpgroup): no stack, and at 16
    packed rows registers that let as many programs share an SM's 64K registers as its shared
    memory lets (three at 2 stages: 150 registers since v51, under the 168 that
    `select.keys_rows_register_cap` caps them at; two at 3 stages: 162, 178 before v51). The
    several-blocks build (MULTI_BLOCK) adds the block index: 104 bytes of stack at 64 rows
    (perf-notes v20 item 1), still none at 16 rows of the 64-key form."""
    for build in _compile_report(_UNIFIED_KEYS_ROWS_PROGRAM):
        assert build["QGMMA"] == (8 if build["block_m"] == 16 else 16)
        assert build["HGMMA"] > 0 and build["HMMA"] == 0
        assert build["serial"] is False and build["regs"] <= 255
        assert build["stack"] <= ((120 if build["multi"] else 104) if build["block_m"] == 64 else 0)
        assert build["smem"] == build["estimate"]
        if build["tile"] == 64 and build["block_m"] == 16:
            assert build["by_regs"] >= build["by_smem"], build


_OTHER_TARGETS_PROGRAM = """
import json, sys
sys.path.insert(0, "scripts")
import compile_report as cr
from triton.backends.compiler import GPUTarget
from pagedattn.device import KNOWN_DEVICES, DeviceInfo
from pagedattn.profiles import select
from pagedattn.profiles.types import ShapeKey, query_class
sm100 = DeviceInfo("nvidia", "sm100", "AN_SM100_GPU", 148, 0, 227 * 1024)  # B200's SMs; the build is what is tested
devices = {80: KNOWN_DEVICES["NVIDIA_A100_SXM4_80GB"], 100: sm100}
unified = [(kv, head, group, seqs, q, kv_len) for kv in ("bf16", "fp8") for head, group, seqs, q, kv_len in (
    (128, 4, 4, 2048, 8192), (256, 16, 20, 4, 32768), (128, 4, 64, 1, 4096), (256, 16, 1, 1, 131072))]
sparse = [(kv, group, rows) for kv in ("bf16", "fp8") for group, rows in ((12, 8192), (24, 520), (3, 64))]
builds = []
for arch, device in devices.items():
    cr.TARGET = GPUTarget("cuda", arch, 32)
    for kv, head, group, seqs, q, kv_len in unified:
        key = ShapeKey("unified", kv, head, group, query_class(q), seqs, q, seqs * q, 1, kv_len)
        p = select.select_profile(key, device).profile
        info = cr.compile_unified("bf16", kv, group, head, 16, p, p.num_splits > 1)
        builds.append(dict(arch=arch, call=f"unified {kv} d{head} g{group} q{q}", profile=p.short(), regs=info["regs"]))
    for kv, group, rows in sparse:
        key = ShapeKey("sparse", kv, 256, group, "decode", rows, 1, rows, 1, 2051)
        p = select.select_profile(key, device).profile
        info = cr.compile_sparse("bf16", kv, group, 256, 16, p, p.num_splits > 1)
        builds.append(dict(arch=arch, call=f"sparse {kv} g{group} rows{rows}", profile=p.short(), regs=info["regs"]))
print(json.dumps(builds))
"""


def test_profiles_without_a_table_build_for_sm80_and_sm100():
    """What an A100 or an sm100 GPU without a tuned table runs: the profile the dispatcher picks
    for prefill, verify, decode, the long request and three sparse shapes, BF16 and FP8 pages,
    built offline for that target. Triton 3.6 failed both before v24: an sm80 build rejects the
    e4m3 type (FP8 pages now arrive as bytes, `ops.common.compute_values`), and the sm100 build
    failed on the lazy rescale's reduction of a row vector to a scalar at 64 or more rows, or at
    64-key tiles in the kv-major form (that test is now reduced over a 2-D view there). The
    interpreter runs both branches in test_build_targets.py."""
    builds = _compile_report(_OTHER_TARGETS_PROGRAM)
    assert len(builds) == 2 * (8 + 6)
    assert all(0 < build["regs"] <= 255 for build in builds)
    assert {build["profile"].split("/")[0] for build in builds if build["arch"] == 100} >= {"m64", "m128"}


_MERGE_PROGRAM = """
import json, sys
sys.path.insert(0, "scripts")
import compile_report as cr
from pagedattn.ops.common import merge_shape
builds = {}
for splits, head in ((13, 256), (128, 256), (256, 256), (300, 256), (16, 16)):
    info = cr.compile_merge(splits, 16, head)
    builds[f"{splits} {head}"] = {"shape": merge_shape(splits, head), "regs": info["regs"], "stack": info["stack"],
                                  "cctl": info["CCTL"]}
print(json.dumps(builds))
"""


def test_merge_builds_its_l2_discards_without_spills():
    """The split merge's sm90 builds (ops/common.py): one CCTL (`discard.global.L2`) per 128-byte line
    a thread drops, where a program's column slice is whole lines (every head size of 32 and more),
    none at head size 16; no stack at 2 or 4 warps, one chunk or several."""
    builds = _compile_report(_MERGE_PROGRAM)
    assert builds["13 256"]["shape"] == [256, 16, 2]
    assert builds["256 256"]["shape"] == [32, 256, 4]
    assert builds["300 256"]["shape"] == [32, 256, 4]  # two chunks
    assert builds["16 16"]["shape"][0] == 16
    for name, build in builds.items():
        assert build["stack"] == 0, name
        assert build["regs"] <= 128, name  # 64 loaded values per thread
        assert (build["cctl"] > 0) == (name != "16 16"), name
