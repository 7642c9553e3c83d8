"""`pagedattn tune`: measure launch profiles per shape bucket and write the device's table.

What it does: for every case of the named workloads (`--tiny`: their tiny cases; `--rows`: sparse
cases re-sized to each row count, one bucket each) it takes the `ShapeKey` the dispatcher will look
up, searches launch profiles around the default (what the dispatcher picks without a tuned table:
`select.untuned_selection`, the arch's rule ladders over the analytic default), checks each
candidate against the float64 reference (rel-L2 < 1e-2 to be eligible) and bit for bit against the
default profile's output, times it (`timing.time_calls` medians), keeps the fastest eligible
profile per bucket and writes the device table and a Markdown report. A unified case of the
prefill class whose batch also holds sequences of at most VERIFY_MAX_QUERIES queries (a mixed batch)
is two buckets, tuned in this order: its short sequences' launch (`select.partitioned_plan`), timed
alone under `select.short_part_key` and checked on those sequences' rows (candidates other than the
Triton kernel are pruned: the Gluon kernels take no query-length range; a split one's merge writes
only those rows), each candidate with the second short launch it implies where its blocks would run
a sequence of VERIFY_MAX_QUERIES queries in more than `select.SHORT_BLOCKS_PER_SEQUENCE` blocks
(`select.short_launches`; that launch's profile is the rules', not tuned); then the call, each
candidate timed as a call with it in the table runs: with the short launches of the short launch's
tuned profile where `select.partition` splits the call, else in one launch (`planned_call`).

Search: the full space (block_m x tile_n x num_splits x num_warps x num_stages x kv_major x
addresses_ahead x warpgroup_mma x shared_exchange x keys_as_rows) has ~5,400 points per bucket, hours of GPU time
for the ~75 buckets of both kernels. The fields act nearly independently (splits set the
parallelism; tile, warps and stages the pipeline of one program), so the tuner does a coordinate
search: from the default it sweeps one field at a time, in the order num_splits, warpgroup_mma,
shared_exchange, keys_as_rows, addresses_ahead, tile_n, block_m, num_warps, num_stages, kv_major
(largest effects first; a move to one of the Gluon kernels takes its fixed block and warps along,
`as_warpgroup_mma`, `as_shared_exchange`, `as_keys_as_rows`), moves only to a value faster than the
current best by more than `--min-gain` (noise must not move the search), and repeats whole passes
until one moves nothing,
since fields interact (on the H200 a move from 8 to 4 warps made more KV splits pay; a single pass
had already fixed the splits). Fields tied to one resource also move in pairs (`sweep_candidates`):
each tile size is also tried with the stage count that keeps the K/V bytes in flight
(`pipeline_matched`), reading addresses ahead is also tried with at least 3 stages (where it keeps
more tiles in flight), and where the best profile splits the KV range, each variant of another field
with the split count that keeps the number of waves (`wave_matched`: a tile that halves shared
memory fits twice the programs per SM, so it only pays with twice the segments). A one-field move
never finds such a pair. The split sweep also tries the counts that fill one and two whole waves of
program slots (`wave_full_splits`), which the powers of two miss, and leaves out counts whose
programs fill under a quarter of the slots (`starves_slots`). Profiles measured in an earlier
pass are not measured again. Each bucket's search starts at the fastest of the default, the best
eligible profile its results file already holds (a later search with more candidates can take
another path and settle in a worse local optimum; resuming at the best found keeps the table from
getting slower) and the profiles the table file holds for the bucket, even ones tuned for older
kernel sources (`tables.previous_profiles`: after a kernel change the old optimum is the best first
guess, so a re-tune with a small `--max-candidates` stays close to it) and every `--first-guess`
that fits (a combination found in an A/B that no one-field move reaches: on the H200, addresses
ahead with a smaller tile and a deeper pipeline). Candidates that cannot fit or compute the shape
(`select.unfit_reason`), are blocklisted (`rules.blocked_reason`) or have more splits than KV tiles
are pruned unrun. A (bucket, profile) pair is measured once; `--max-candidates` caps a bucket's
measurements, those on record from earlier runs included (a rerun with the same cap measures nothing
new, a larger cap goes on); profiles on record are read back free, so a sweep's share of the cap
goes to its values not on record (`within_budget`).

Isolation: the tuner process launches no kernel. Workers (`worker_main`, started with the same
Python) answer JSON-line requests on stdin/stdout; fd 1 is reserved for replies and anything a
library prints goes to stderr, kept per worker for error messages. A worker that dies (abort,
segfault, or a CUDA error: after a failed launch the worker checks its context and exits if it is
broken) makes the candidate "faulted"; one silent for `--timeout` seconds is killed and the
candidate is a "timeout". Both are printed as suggested `rules.BLOCKLIST` rows, and the next request
starts a fresh worker. The timing worker builds the inputs (rotated sets when one set fits in L2),
the float64 reference and the default output once per bucket. Before a batch is timed, `--jobs`
compile workers launch each candidate once on zero-filled tensors of the same shapes, strides and
dtypes (Triton specialises on those, not on contents), except the K/V caches' page count, cut to
one Triton specialises alike (`compile_blocks`), filling the on-disk Triton cache in parallel; a
candidate that fails there is recorded and not retried. Timing is serial, one worker.
Fault injection (tests; checking the isolation on a GPU): PAGEDATTN_TUNE_FAULT="abort:<profile>,
hang:<profile>" (<profile> as `LaunchProfile.short()`) makes a worker about to run that profile
call os.abort() or sleep forever.

An interrupted run (SIGINT: Ctrl-C or `timeout -s INT`) writes the table and report for the buckets it
finished and exits with status 130; the unfinished bucket resumes from the results file next time.

Files. Results (`--results`, JSON lines appended as measured; a rerun reuses records of the same
device, Triton version and kernel hash): {"device", "triton", "kernel", "kernel_hash", "key":
ShapeKey.bucket(), "case", "profile", "status": ok|wrong|error|faulted|timeout, "ms", "rel_l2",
"bitwise", "error", "phase": time|compile}. Table: the format of `profiles/tables.py`, entries with
speedup, default_ms, tuned_ms, bitwise, rel_l2, default_profile and case; entries of other buckets
are kept unless tuned with another Triton version or kernel source. Report (`--report`): per shape,
the speedup over the default at a headline size with min-max over the swept range (rows for sparse,
KV length for unified), bitwise, rel-L2, chosen profile, candidates tried/pruned/faulted; then
every bucket, the pruning reasons and the faults.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import datetime
import functools
import itertools
import json
import math
import os
import re
import select as select_io
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
import triton

from . import api, reference, timing, workloads
from .device import KNOWN_DEVICES, DeviceInfo
from .profiles import rules, tables
from .profiles import select as dispatch
from .profiles.types import (
    EXCHANGE_BLOCK_M, EXCHANGE_MIN_STAGES, EXCHANGE_WARPS, KERNELS, KEYS_ROWS_BLOCK_M, KEYS_ROWS_TILE, KEYS_ROWS_WARPS,
    MAX_STAGES, UNIFIED_KEYS_ROWS_FORMS, UNIFIED_KEYS_ROWS_MAX_M, WGMMA_BLOCK_M, WGMMA_MIN_STAGES, WGMMA_WARPS,
    VERIFY_MAX_QUERIES, LaunchProfile, ShapeKey, cdiv, next_pow2,
)

REL_L2_BOUND = 1e-2
SEARCH_ORDER = ("num_splits", "warpgroup_mma", "shared_exchange", "keys_as_rows", "addresses_ahead", "tile_n",
                "block_m", "num_warps", "num_stages", "kv_major")
STARTUP_SECONDS = 180.0  # a fresh worker's imports and device initialisation
SETUP_TIMEOUT_FACTOR = 10  # building inputs and the float64 reference, in units of --timeout
FAULT_ENV = "PAGEDATTN_TUNE_FAULT"
HEADLINE_ROWS = 8192
FAILED = ("faulted", "timeout")


# --------------------------------------------------------------------------- search space


def field_values(key: ShapeKey) -> dict[str, tuple]:
    heads_block = max(16, next_pow2(key.group))
    return {
        # up to the analytic default's cap (select.MAX_SPLITS): one KV head of one sequence has no
        # other parallelism; 512 lost to 256 on the H200's single long requests (perf-notes v7), and
        # 264-396 on the keys-as-rows kernel too (v21 item 1: the split merge's chunk doubles past 256)
        "num_splits": (1, 2, 4, 8, 16, 32, 64, 128, 256) if key.kernel == "unified" else (1, 2, 4, 8, 16),
        "tile_n": (16, 32, 64, 128),
        "block_m": tuple(m for m in (16, 32, 64, 128) if m >= heads_block),
        "num_warps": (2, 4, 8),
        "num_stages": tuple(range(1, MAX_STAGES + 1)),
        "kv_major": (False, True),
        "addresses_ahead": (False, True),
        "warpgroup_mma": (False, True) if key.kernel == "unified" else (False,),
        "shared_exchange": (False, True) if key.kernel == "sparse" else (False,),
        "keys_as_rows": (False, True) if key.kv_dtype == "fp8" and (key.kernel == "sparse" or key.head_size == 256)
        else (False,),
    }


def wave_matched(cand: LaunchProfile, start: LaunchProfile, key: ShapeKey, device: DeviceInfo) -> LaunchProfile:
    """`cand` with `start`'s split count scaled by how many more (or fewer) programs fit per SM with
    `cand`'s shared memory and registers, so that the two are compared at the same number of waves."""
    ratio = dispatch.program_slots(cand, key, device) / dispatch.program_slots(start, key, device)
    splits = min(max(round(start.num_splits * ratio), 1), dispatch.MAX_SPLITS[key.kernel])
    return dataclasses.replace(cand, num_splits=splits)


def wave_full_splits(profile: LaunchProfile, key: ShapeKey, device: DeviceInfo, waves: int = 2) -> list[int]:
    """For 1..`waves` waves, the largest split count whose programs fit in that many waves of
    `profile`'s program slots: 20 sequences at 2 programs per SM of 132 fill one wave with 13
    splits (260 of 264 slots), where the powers of two leave 40 % idle (8) or start a second
    wave (16), and the wave rule's 12 stops at 91 %."""
    units, slots = dispatch.work_units(profile, key), dispatch.program_slots(profile, key, device)
    found = [min(w * slots // units, dispatch.MAX_SPLITS[key.kernel]) for w in range(1, waves + 1)]
    return sorted({s for s in found if s > 1})


def starves_slots(profile: LaunchProfile, key: ShapeKey, device: DeviceInfo) -> bool:
    """Whether `profile`'s programs fill under a quarter of the SMs' program slots while its KV range
    could take twice its splits. The split sweep skips such counts: the 70 that v15's H200 passes
    measured took 1.07-116x their bucket's best time, and every tuned entry fills at least 0.48 of
    its slots (perf-notes v15 item 7)."""
    units, slots = dispatch.work_units(profile, key), dispatch.program_slots(profile, key, device)
    return 4 * units * profile.num_splits < slots and 2 * profile.num_splits <= cdiv(key.kv_len, profile.tile_n)


def pipeline_matched(cand: LaunchProfile, start: LaunchProfile) -> LaunchProfile:
    """`cand` (another tile size) with the stage count that keeps `start`'s K/V bytes in flight,
    tile x buffers: a 4x larger tile with one buffer instead of two, a smaller one with more.
    Buffers per stage count as `select.kv_buffers` has them: num_stages - 1 (at most 3), or one per
    stage with the addresses read ahead and in the Gluon kernels' rings (warpgroup-MMA: at least 3,
    shared-exchange and keys-as-rows: at least 2)."""
    ring = start.addresses_ahead or start.warpgroup_mma or start.shared_exchange or start.keys_as_rows
    buffers = max(round(dispatch.kv_buffers(start.num_stages, ring) * start.tile_n / cand.tile_n), 1)
    if cand.warpgroup_mma or cand.shared_exchange or cand.keys_as_rows:
        least = WGMMA_MIN_STAGES if cand.warpgroup_mma else EXCHANGE_MIN_STAGES
        return dataclasses.replace(cand, num_stages=min(max(buffers, least), MAX_STAGES))
    stages = min(buffers, MAX_STAGES) if cand.addresses_ahead else min(buffers, 3) + 1
    return dataclasses.replace(cand, num_stages=stages)


def as_warpgroup_mma(profile: LaunchProfile, key: ShapeKey) -> LaunchProfile:
    """`profile` moved to the warpgroup-MMA kernel: its tile, ring depth (at least 3), splits and
    addresses_ahead, the kernel's fixed block and warps, no kv_major or keys_as_rows (the moves
    share one signature; only the keys-as-rows move reads `key`)."""
    return dataclasses.replace(profile, block_m=WGMMA_BLOCK_M, num_warps=WGMMA_WARPS, kv_major=False,
                               num_stages=max(profile.num_stages, WGMMA_MIN_STAGES), warpgroup_mma=True,
                               keys_as_rows=False)


def as_shared_exchange(profile: LaunchProfile, key: ShapeKey) -> LaunchProfile:
    """`profile` moved to the sparse shared-exchange kernel: its tile (at most 32) and ring depth (at
    least 2) and splits, the kernel's fixed block and warps, no Triton-only flags."""
    return dataclasses.replace(profile, block_m=EXCHANGE_BLOCK_M, num_warps=EXCHANGE_WARPS, kv_major=False,
                               addresses_ahead=False, num_stages=max(profile.num_stages, EXCHANGE_MIN_STAGES),
                               tile_n=min(profile.tile_n, 32), shared_exchange=True, keys_as_rows=False)


def as_keys_as_rows(profile: LaunchProfile, key: ShapeKey) -> LaunchProfile:
    """`profile` moved to a keys-as-rows kernel, keeping its splits and no other kernel's flags.
    Sparse (ops/sparse_keys_rows.py): its ring depth (at least 2), the kernel's fixed block, 64-key
    tile and warps. Unified (ops/unified_keys_rows.py): block_m = the call's queries x group rounded
    up to a power of two (at least 16), capped at the form's largest block (a sequence's queries then
    run in several blocks); the 64-key form (4 warps) where `profile` has 64-key tiles and those rows
    are at most 32, else the 128-key form (8 warps); its ring depth within 2..3 at up to 32 packed
    rows, 2 at 64 (shared memory: 3 stages at 64 rows need ~240 KB)."""
    flags = dict(kv_major=False, addresses_ahead=False, warpgroup_mma=False, shared_exchange=False, keys_as_rows=True)
    if key.kernel == "sparse":
        return dataclasses.replace(profile, block_m=KEYS_ROWS_BLOCK_M, tile_n=KEYS_ROWS_TILE, num_warps=KEYS_ROWS_WARPS,
                                   num_stages=max(profile.num_stages, EXCHANGE_MIN_STAGES), **flags)
    rows = max(16, next_pow2(key.group * key.max_seqlen_q))
    tile = 64 if profile.tile_n == 64 and rows <= UNIFIED_KEYS_ROWS_MAX_M[64] else 128
    block_m = min(rows, UNIFIED_KEYS_ROWS_MAX_M[tile])
    stages = min(max(profile.num_stages, EXCHANGE_MIN_STAGES), 3 if block_m <= 32 else 2)
    return dataclasses.replace(profile, block_m=block_m, tile_n=tile, num_warps=UNIFIED_KEYS_ROWS_FORMS[tile],
                               num_stages=stages, **flags)


GLUON_MOVES = {"warpgroup_mma": as_warpgroup_mma, "shared_exchange": as_shared_exchange,
               "keys_as_rows": as_keys_as_rows}  # flag -> its move


def sweep_candidates(start: LaunchProfile, name: str, key: ShapeKey, device: DeviceInfo) -> list[LaunchProfile]:
    """`start` with each value of one field. Fields that share a resource move together too: each
    tile size also comes with its pipeline-matched stage count (`pipeline_matched`), and when
    `start` splits the KV range every variant of a field other than the split count also comes
    with its wave-matched split count (`wave_matched`: a smaller tile that fits two programs per
    SM wants twice the segments); reading addresses ahead also comes with at least 3 stages.
    Swept alone, each field of such a pair looks worse. The split sweep leaves out the counts that
    starve the SMs (`starves_slots`) other than `start`'s."""
    variants = [dataclasses.replace(start, **{name: v}) for v in field_values(key)[name]]
    if name == "num_splits":
        variants += [dataclasses.replace(start, num_splits=s) for s in wave_full_splits(start, key, device)]
        variants = [c for c in variants if c == start or not starves_slots(c, key, device)]
    if name == "tile_n":
        variants += [pipeline_matched(c, start) for c in variants]
    if name == "addresses_ahead":
        variants += [dataclasses.replace(c, num_stages=max(c.num_stages, 3)) for c in variants if c.addresses_ahead]
    if name in GLUON_MOVES:
        variants = [GLUON_MOVES[name](c, key) if getattr(c, name) else c for c in variants]
    if name == "tile_n" and start.keys_as_rows and key.kernel == "unified":  # each tile size has its warps
        variants = [as_keys_as_rows(c, key) for c in variants]
    if name != "num_splits" and start.num_splits > 1:
        variants += [wave_matched(c, start, key, device) for c in variants]
    return list(dict.fromkeys(variants))


def within_budget(batch: list[LaunchProfile], recorded: set[str], spent: int, cap: int) -> list[LaunchProfile]:
    """The candidates of one sweep to look at: those on record (read back, no measurement) and,
    in sweep order, as many of the others as the cap leaves (`spent`: profiles of the bucket
    measured or on record so far)."""
    fresh = [c for c in batch if c.short() not in recorded]
    return [c for c in batch if c.short() in recorded] + fresh[: max(0, cap - spent)]


def prune_reason(profile: LaunchProfile, key: ShapeKey, device: DeviceInfo, part: str | None = None) -> str | None:
    """Why a candidate is not worth running (None: run it); `part`: the bucket's `CaseRef.part`."""
    if part == SHORT_PART and profile.kernel != "triton":
        return "the short sequences' launch runs the Triton kernel"
    reason = dispatch.unfit_reason(profile, key, device)
    if reason:
        return reason
    blocked = rules.blocked_reason(key.kernel, device, key, profile)
    if blocked:
        return f"blocklisted: {blocked}"
    tiles = cdiv(key.kv_len, profile.tile_n)
    return f"{profile.num_splits} splits for {tiles} KV tiles" if profile.num_splits > tiles else None


def reason_kind(reason: str) -> str:
    """A pruning reason with its numbers replaced, to count reasons of one kind together."""
    return re.sub(r"\d+", "N", reason)


def case_shape_key(case: workloads.Case) -> ShapeKey:
    """The dispatcher's ShapeKey of a case from shapes alone (meta tensors, nothing allocated).
    The timing worker recomputes it from the built inputs and the tuner checks that they agree."""
    s = case.shape
    kv = torch.empty(1, s.block_size, s.num_kv_heads, s.head_size, dtype=workloads.DTYPES[s.kv_dtype], device="meta")
    if isinstance(s, workloads.SparseShape):
        q = torch.empty(s.rows, s.num_q_heads, s.head_size, device="meta")
        return api.sparse_shape_key(q, kv, torch.empty(s.rows, s.topk, device="meta"))
    q = torch.empty(sum(s.query_lens), s.num_q_heads, s.head_size, device="meta")
    table = torch.empty(len(s.kv_lens), max(cdiv(n, s.block_size) for n in s.kv_lens), device="meta")
    return api.unified_shape_key(q, kv, table, s.max_seqlen_q, max(s.kv_lens),
                                 api.has_score_mods(s.sliding_window, s.softcap, s.sinks or None))


SHORT_PART = "short"  # CaseRef.part: the launch of a partitioned call's short sequences alone


@dataclass(frozen=True)
class CaseRef:
    """How a worker finds a case: workload, tiny or full cases, index, optional row count, and
    optionally which launch of a partitioned call to time (SHORT_PART)."""

    workload: str
    tiny: bool
    index: int
    rows: int | None = None
    part: str | None = None

    def resolve(self) -> workloads.Case:
        w = workloads.get_workload(self.workload)
        case = (w.tiny if self.tiny else w.cases)[self.index]
        return workloads.with_rows(case, self.rows) if self.rows else case


@dataclass
class Task:
    """One shape bucket to tune; cases that map to the same bucket are tuned once (`merged`)."""

    ref: CaseRef
    label: str
    key: ShapeKey
    merged: list[str] = field(default_factory=list)

    @property
    def bucket_id(self) -> str:
        return json.dumps(self.key.bucket(), sort_keys=True)


def plan_tasks(args: argparse.Namespace) -> list[Task]:
    names = args.workload or [n for n, w in workloads.WORKLOADS.items() if args.kernel in (None, w.kernel)]
    chosen = [workloads.get_workload(n) for n in names]
    for w in chosen:
        if args.kernel and w.kernel != args.kernel:
            raise ValueError(f"workload {w.name!r} runs the {w.kernel} kernel, not --kernel {args.kernel}")
    if args.rows and not any(w.kernel == "sparse" for w in chosen):
        raise ValueError("--rows applies to sparse workloads, and none is selected")
    tasks: dict[str, Task] = {}
    for w in chosen:
        cases = w.tiny if args.tiny else w.cases
        if not cases:
            raise ValueError(f"workload {w.name!r} has no {'tiny ' if args.tiny else ''}cases")
        for index, rows in itertools.product(range(len(cases)), args.rows if w.kernel == "sparse" and args.rows else [None]):
            ref = CaseRef(w.name, args.tiny, index, rows)
            case = ref.resolve()
            if args.match and args.match not in case.label:
                continue
            key = case_shape_key(case)
            found = [Task(ref, case.label, key)]
            short_key = dispatch.short_part_key(key)
            if short_key is not None and min(case.shape.query_lens) <= VERIFY_MAX_QUERIES:
                found.insert(0, Task(dataclasses.replace(ref, part=SHORT_PART),
                                     f"{case.label} [q<={VERIFY_MAX_QUERIES} launch]", short_key))
            for task in found:
                same = tasks.setdefault(task.bucket_id, task)
                if task.label not in (same.label, *same.merged):
                    same.merged.append(task.label)
    if not tasks:
        raise ValueError(f"no case label contains --match {args.match!r}")
    return list(tasks.values())


def default_profile(task: Task, device: DeviceInfo) -> LaunchProfile:
    """Where a bucket's search starts and what its speedup is over: the dispatcher's choice without a
    table (`select.untuned_selection`; for a short sequences' launch cut into segments as the
    dispatcher cuts it without a table, `select.segmented_short`)."""
    untuned = dispatch.untuned_selection(task.key, device)
    return (dispatch.segmented_short(untuned, task.key) if task.ref.part == SHORT_PART else untuned).profile


def plan_case(task: Task, device: DeviceInfo) -> tuple[list[LaunchProfile], collections.Counter, int, int]:
    """The first sweep (the default and its surviving one-field variants), the pruning reasons over
    those variants, and the full Cartesian space: points surviving pruning, points in all."""
    key, values = task.key, field_values(task.key)
    default = default_profile(task, device)
    candidates, pruned, seen = [default], collections.Counter(), {default}
    for name in SEARCH_ORDER:
        for cand in sweep_candidates(default, name, key, device):
            if cand in seen:
                continue
            seen.add(cand)
            reason = prune_reason(cand, key, device, task.ref.part)
            if reason:
                pruned[reason_kind(reason)] += 1
            else:
                candidates.append(cand)
    space = [LaunchProfile(**dict(zip(SEARCH_ORDER, p))) for p in itertools.product(*(values[n] for n in SEARCH_ORDER))]
    return candidates, pruned, sum(prune_reason(p, key, device, task.ref.part) is None for p in space), len(space)


# --------------------------------------------------------------------------- worker process


def planned_call(key: ShapeKey, short: tuple[dispatch.PlannedLaunch, ...] | None, profile: LaunchProfile,
                 out: torch.Tensor, **kwargs) -> torch.Tensor:
    """A unified call with `profile` as the table's choice for `key`: in the launches of
    `select.partition` with the short sequences' launches `short`."""
    plan = dispatch.partition(key, dispatch.Selection(profile, "explicit"), short)
    return api.launch_unified_plan(plan, out=out, **kwargs)


def short_part_launch(profile: LaunchProfile, out: torch.Tensor, **kwargs) -> torch.Tensor:
    """A unified call's launches of its short sequences alone with `profile` as the short launch's
    (`select.short_launches`: with the second short launch it implies, if any); the other sequences'
    rows are left as they are, or zero where a launch splits."""
    short_key = dispatch.short_part_key(api.unified_shape_key(
        kwargs["q"], kwargs["k_cache"], kwargs["block_table"], kwargs["max_seqlen_q"], kwargs["max_seqlen_k"],
        api.has_score_mods(**kwargs)))
    plan = dispatch.short_launches(short_key, dispatch.Selection(profile, "explicit"), DeviceInfo.current())
    return api.launch_unified_plan(plan, out=out, **kwargs)


def fault_injections() -> dict[str, str]:
    """PAGEDATTN_TUNE_FAULT as {profile short name: "abort" | "hang"}."""
    faults = {}
    for item in filter(None, os.environ.get(FAULT_ENV, "").split(",")):
        action, _, short = item.strip().partition(":")
        if action not in ("abort", "hang") or not short:
            raise ValueError(f"{FAULT_ENV}: expected items 'abort:<profile>' or 'hang:<profile>', got {item!r}")
        faults[short] = action
    return faults


def _device_broken() -> bool:
    """After a failed launch: is the CUDA context unusable (a sticky error such as an illegal address)?"""
    if not torch.cuda.is_available():
        return False
    try:
        torch.cuda.synchronize()
    except Exception:  # whatever the error type, the context cannot run another candidate
        return True
    return False


CACHE_ARGS = ("k_cache", "v_cache")  # [num_blocks, ...]: the arguments compile_blocks shrinks


def compile_blocks(num_blocks: int) -> int:
    """A page count for a compile worker's zero caches that Triton specialises as it does
    `num_blocks` (an int kernel argument: equal to 1, a multiple of 16, or neither), so the build is
    the one the timing worker then runs."""
    if num_blocks == 1:
        return 1
    return 16 if num_blocks % 16 == 0 else 17


class _WorkerState:
    """A worker's inputs: real ones with reference and default output (timing), or zeros (compiling)."""

    def __init__(self) -> None:
        self.faults = fault_injections()
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.setup_id: str | None = None

    def handle(self, msg: dict) -> dict:
        try:
            if msg["op"] == "setup":
                return self.setup(msg)
            if "signature" in msg and msg["signature_id"] != self.setup_id:
                self.setup_zeros(msg)
        except Exception as exc:  # the inputs could not be made: says nothing about the candidate
            status = "faulted" if _device_broken() else "unavailable"
            return {"status": status, "error": f"{type(exc).__name__}: {exc}"[:500]}
        try:
            return self.run(LaunchProfile.from_dict(msg["profile"]), msg["measure"])
        except Exception as exc:  # a failing launch is a result to report, not a reason to stop
            status = "faulted" if _device_broken() else "error"
            return {"status": status, "error": f"{type(exc).__name__}: {exc}"[:500]}

    def _use_kernel(self, kernel: str, part: str | None = None) -> None:
        self.launch = short_part_launch if part == SHORT_PART else \
            api.unified_attention if kernel == "unified" else api.sparse_attention

    def _release_inputs(self) -> None:
        """Drop the previous bucket's tensors and hand their memory back to the device before the
        next bucket's are made: a dozen compile workers each caching a 32K-token case's pages
        left the timing worker's set-up out of memory on the H200 (perf-notes v9)."""
        self.inputs, self.reference, self.default_out, self.rows = [], None, None, slice(None)
        if self.device == "cuda":
            torch.cuda.empty_cache()

    def setup(self, msg: dict) -> dict:
        self.setup_id = None
        self._release_inputs()
        ref = CaseRef(**msg["case"])
        case = ref.resolve()
        kernel = case.shape.kernel
        self._use_kernel(kernel, ref.part)
        first = case.build(self.device, msg["seed"]).kwargs
        sets = 1
        if timing.timings_meaningful():
            set_bytes = sum(v.numel() * v.element_size() for v in first.values() if isinstance(v, torch.Tensor))
            sets = timing.rotation_count(set_bytes, DeviceInfo.current())
        self.inputs = [first] + [case.build(self.device, msg["seed"] + i).kwargs for i in range(1, sets)]
        self.reference = (reference.unified_attention if kernel == "unified" else reference.sparse_attention)(**first)
        self.timing_ms = (msg["warmup_ms"], msg["rep_ms"])
        if kernel == "unified":
            key = api.unified_shape_key(first["q"], first["k_cache"], first["block_table"], first["max_seqlen_q"],
                                        first["max_seqlen_k"], api.has_score_mods(**first))
            short_key = dispatch.short_part_key(key)
            if ref.part is None and short_key is not None:
                short = dispatch.Selection(LaunchProfile.from_dict(msg["short"]), "table") if msg.get("short") \
                    else dispatch.short_selection(short_key, DeviceInfo.current())
                self.launch = functools.partial(planned_call, key,
                                                dispatch.short_launches(short_key, short, DeviceInfo.current()))
            if ref.part == SHORT_PART:
                key = short_key
                self.rows = torch.repeat_interleave(torch.tensor([n <= VERIFY_MAX_QUERIES for n in case.shape.query_lens]),
                                                    torch.tensor(case.shape.query_lens)).to(self.device)
        else:
            key = api.sparse_shape_key(first["q"], first["k_cache"], first["indices"])
        self.default_out = self._launch_once(LaunchProfile.from_dict(msg["default"]))
        signature = {name: {"shape": list(v.shape), "stride": list(v.stride()), "dtype": str(v.dtype)[len("torch."):]}
                     if isinstance(v, torch.Tensor) else {"value": v} for name, v in first.items()}
        self.setup_id = msg["id"]
        return {"status": "ok", "key": key.bucket(), "signature": signature}

    def setup_zeros(self, msg: dict) -> None:
        """Zero inputs of the bucket's signature, to compile candidates with. The page tables and
        selections are all zero, so every call reads page 0 only, and the caches keep just
        `compile_blocks` pages: at full size a dozen compile workers each held the bucket's whole
        cache (GQA decode at 32,768 keys: 8.6 GB; perf-notes v9 item 5)."""
        self.setup_id = None
        self._release_inputs()
        self._use_kernel(msg["kernel"], msg.get("part"))
        inputs = {}
        for name, spec in msg["signature"].items():
            if "value" in spec:
                inputs[name] = spec["value"]
                continue
            shape = list(spec["shape"])
            if name in CACHE_ARGS:
                shape[0] = compile_blocks(shape[0])
            inputs[name] = torch.empty_strided(shape, spec["stride"], dtype=getattr(torch, spec["dtype"]),
                                               device=self.device).zero_()
        self.inputs = [inputs]
        self.setup_id = msg["signature_id"]

    def _launch_once(self, profile: LaunchProfile) -> torch.Tensor:
        out = torch.full_like(self.inputs[0]["q"], float("nan"))
        self.launch(**self.inputs[0], out=out, profile=profile)
        if self.device == "cuda":
            torch.cuda.synchronize()
        return out

    def run(self, profile: LaunchProfile, measure: bool) -> dict:
        action = self.faults.get(profile.short())
        if action == "abort":
            os.abort()
        while action == "hang":
            time.sleep(3600)
        out = self._launch_once(profile)
        if not measure:
            return {"status": "ok"}
        err = reference.rel_l2(out[self.rows], self.reference[self.rows])
        bitwise = bool(torch.equal(out[self.rows], self.default_out[self.rows]))
        if not err < REL_L2_BOUND:  # also catches NaN
            problem = f"rel-L2 {err:.2e} >= {REL_L2_BOUND:g}" if math.isfinite(err) else "non-finite output"
            return {"status": "wrong", "rel_l2": err if math.isfinite(err) else None, "bitwise": bitwise, "error": problem}
        outs = [torch.empty_like(kw["q"]) for kw in self.inputs]
        calls = [functools.partial(self.launch, **kw, out=o, profile=profile) for kw, o in zip(self.inputs, outs)]
        return {"status": "ok", "ms": timing.time_calls(calls, *self.timing_ms), "rel_l2": err, "bitwise": bitwise}


def worker_main() -> None:
    """Entry point of a worker process: one JSON request per stdin line, one reply per stdout line."""
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever a library prints must not corrupt the replies
    state = _WorkerState()
    channel.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["op"] == "exit":
            break
        reply = state.handle(msg)
        channel.write(json.dumps(reply) + "\n")
        if reply["status"] == "faulted":
            os._exit(3)  # a broken CUDA context cannot run the next candidate


# --------------------------------------------------------------------------- tuner side of a worker


class Worker:
    """A worker process and its JSON-lines channel; `send` starts a fresh one when none is alive."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.log = None
        self.buffer = b""
        self.setup_id: str | None = None  # which bucket's inputs the worker holds (timing worker)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def fileno(self) -> int:
        return self.proc.stdout.fileno()

    def send(self, msg: dict) -> bool:
        """Write a request, starting a worker first if none is alive; True when it is fresh."""
        fresh = not self.alive
        if fresh:
            self.close()
            env = dict(os.environ)
            root = str(Path(__file__).resolve().parent.parent)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, (root, env.get("PYTHONPATH"))))
            self.log = tempfile.TemporaryFile()
            self.proc = subprocess.Popen([sys.executable, "-c", "from pagedattn.tune import worker_main; worker_main()"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env)
        try:
            self.proc.stdin.write((json.dumps(msg) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # the worker is gone; the end of its output reports it
        return fresh

    def pump(self) -> bool:
        """Read what the worker wrote; False at the end of its output (it died)."""
        chunk = os.read(self.fileno(), 1 << 16)
        self.buffer += chunk
        return bool(chunk)

    def next_message(self) -> dict | None:
        if b"\n" not in self.buffer:
            return None
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def death(self) -> str:
        """How the worker ended: its signal or exit status and the end of its stderr."""
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            rc = self.proc.returncode
        how = f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exited with status {rc}"
        self.log.seek(0, os.SEEK_END)
        self.log.seek(max(0, self.log.tell() - 4000))
        lines = [s.strip() for s in self.log.read().decode(errors="replace").splitlines() if s.strip()]
        return f"worker {how}" + (f": {' | '.join(lines[-3:])[-300:]}" if lines else "")

    def kill(self) -> None:
        if self.alive:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()

    def close(self) -> None:
        if self.alive:
            try:
                self.proc.stdin.write(b'{"op": "exit"}\n')
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.kill()
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.stdout.close()
            self.log.close()
        self.proc, self.log, self.buffer, self.setup_id = None, None, b"", None


def exchange(requests: list[tuple[Worker, dict]], timeout: float) -> list[dict]:
    """Send each worker one request and collect the replies in order. A worker that dies gives a
    "faulted" reply, one silent for `timeout` seconds (after its start-up) is killed: "timeout"."""
    pending = {w: time.monotonic() + (STARTUP_SECONDS if w.send(msg) else timeout) for w, msg in requests}
    replies: dict[Worker, dict] = {}
    while pending:
        wait = max(0.0, min(pending.values()) - time.monotonic())
        for w in select_io.select(list(pending), [], [], wait)[0]:
            if not w.pump():
                replies[w] = {"status": "faulted", "error": w.death()}
                del pending[w]
            while w in pending and (reply := w.next_message()) is not None:
                if reply.get("ready"):
                    pending[w] = time.monotonic() + timeout
                    continue
                if reply["status"] == "faulted":
                    w.kill()  # it exits by itself; wait so that the next request cannot reach it
                replies[w] = reply
                del pending[w]
        for w, deadline in list(pending.items()):
            if time.monotonic() > deadline:
                w.kill()
                replies[w] = {"status": "timeout", "error": f"no answer within {timeout:g} s"}
                del pending[w]
    return [replies[w] for w, _ in requests]


# --------------------------------------------------------------------------- measurements and search


@dataclass
class Measurement:
    profile: LaunchProfile
    status: str  # ok | wrong | error | faulted | timeout
    ms: float | None = None
    rel_l2: float | None = None
    bitwise: bool | None = None
    error: str = ""
    phase: str = "time"  # "compile" when the compile pool saw the failure

    @property
    def eligible(self) -> bool:
        return self.status == "ok" and self.ms is not None

    @staticmethod
    def from_reply(profile: LaunchProfile, reply: dict, phase: str) -> "Measurement":
        return Measurement(profile, reply["status"], reply.get("ms"), reply.get("rel_l2"), reply.get("bitwise"),
                           reply.get("error", ""), reply.get("phase", phase))


class ResultStore:
    """The JSON-lines results file: what is already measured, and the log new results go to."""

    def __init__(self, path: Path, device_name: str) -> None:
        self.path, self.device_name = path, device_name
        self.records: dict[tuple[str, str], dict] = {}
        self.added = self.reused = 0
        for number, line in enumerate(path.read_text().splitlines() if path.exists() else [], 1):
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                print(f"pagedattn tune: skipping unreadable line {number} of {path}", file=sys.stderr)
                continue
            if (rec.get("device"), rec.get("triton")) == (device_name, triton.__version__) and \
                    rec.get("kernel") in KERNELS and rec.get("kernel_hash") == tables.kernel_hash(rec["kernel"]):
                short = LaunchProfile.from_dict(rec["profile"]).short()
                self.records[(json.dumps(rec["key"], sort_keys=True), short)] = rec

    def get(self, task: Task, profile: LaunchProfile) -> Measurement | None:
        rec = self.records.get((task.bucket_id, profile.short()))
        if rec is None:
            return None
        self.reused += 1
        return Measurement.from_reply(profile, rec, "time")

    def fastest(self, task: Task) -> Measurement | None:
        """The fastest eligible profile recorded for the task's bucket, from any earlier run."""
        records = [r for (bucket, _), r in self.records.items() if bucket == task.bucket_id and r["status"] == "ok"]
        if not records:
            return None
        best = min(records, key=lambda r: r["ms"])
        return Measurement.from_reply(LaunchProfile.from_dict(best["profile"]), best, "time")

    def recorded(self, task: Task) -> set[str]:
        """Profiles (short names) on record for the task's bucket from earlier runs."""
        return {short for bucket, short in self.records if bucket == task.bucket_id}

    def add(self, task: Task, m: Measurement) -> None:
        rec = {"device": self.device_name, "triton": triton.__version__, "kernel": task.key.kernel,
               "kernel_hash": tables.kernel_hash(task.key.kernel), "key": task.key.bucket(), "case": task.label,
               "profile": m.profile.to_dict(), "status": m.status, "ms": m.ms, "rel_l2": m.rel_l2,
               "bitwise": m.bitwise, "error": m.error, "phase": m.phase}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        self.added += 1


@dataclass
class BucketResult:
    task: Task
    default_profile: LaunchProfile
    measured: dict[str, Measurement] = field(default_factory=dict)
    pruned: dict[str, str] = field(default_factory=dict)  # profile short name -> reason
    default: Measurement | None = None
    best: Measurement | None = None
    error: str = ""

    @property
    def speedup(self) -> float:
        return self.default.ms / self.best.ms

    def count(self, *statuses: str) -> int:
        return sum(m.status in statuses for m in self.measured.values())


class BucketError(Exception):
    pass


class Progress:
    """A status line on stderr, redrawn in place on a terminal; otherwise a line per finished bucket."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled, self.tty = total, enabled, enabled and sys.stderr.isatty()

    def show(self, done: float, label: str, detail: str) -> None:
        if self.tty:
            filled = int(24 * done / max(1, self.total))
            line = f"[{'#' * filled}{'.' * (24 - filled)}] {int(done)}/{self.total} {label} | {detail}"
            width = shutil.get_terminal_size().columns - 1
            sys.stderr.write("\r" + line[:width].ljust(width))
            sys.stderr.flush()

    def bucket_done(self, done: int, label: str, summary: str) -> None:
        if self.tty:
            self.show(done, label, summary)
        elif self.enabled:
            print(f"[{done}/{self.total}] {label}: {summary}", file=sys.stderr)

    def finish(self) -> None:
        if self.tty:
            sys.stderr.write("\n")


class Tuner:
    def __init__(self, args: argparse.Namespace, device: DeviceInfo, store: ResultStore, progress: Progress) -> None:
        self.args, self.device, self.store, self.progress = args, device, store, progress
        self.timer = Worker()
        self.pool = [Worker() for _ in range(args.jobs)]
        self.signature: dict = {}  # tensor shapes of the timing worker's bucket, for the compile workers
        self.short_best: dict[str, LaunchProfile] = {}  # the tuned profile of each short-part bucket of this run
        self.done = 0

    def close(self) -> None:
        for w in [self.timer, *self.pool]:
            w.close()

    def tune(self, task: Task) -> BucketResult:
        result = BucketResult(task, default_profile(task, self.device))
        try:
            result.default = result.best = self._measure(result, [result.default_profile])[0]
            if not result.default.eligible:
                raise BucketError(f"default profile {result.default_profile.short()} is {result.default.status}: "
                                  f"{result.default.error}")
            self._start_at_the_best_known(result)
            moved = True
            while moved:  # ends at a pass that moves nothing; at the candidate cap no pass can move
                moved = any([self._sweep(result, name) for name in SEARCH_ORDER])  # a list: sweep every field
        except BucketError as exc:
            result.error = str(exc)
        if task.ref.part == SHORT_PART and not result.error:
            self.short_best[task.bucket_id] = result.best.profile
        self.done += 1
        summary = result.error or f"{result.best.profile.short()} {result.speedup:.2f}x over the default"
        self.progress.bucket_done(self.done, f"{task.key.kernel} {task.label}", summary)
        return result

    def _start_at_the_best_known(self, result: BucketResult) -> None:
        """Move the start from the default to the fastest of: the best profile on record for this
        bucket (a resumed search), the profiles the table file holds for it, current or previous
        (after a kernel change its records are gone, but the old optimum is the best first guess),
        and the --first-guess profiles that fit it (a pair of fields no one-field move reaches)."""
        task, earlier = result.task, self.store.fastest(result.task)
        known = [earlier.profile] if earlier is not None else []
        known += [p for p in [*tables.previous_profiles(task.key, self.device.name, self.args.table_dir),
                              *self.args.first_guess]
                  if prune_reason(p, task.key, self.device, task.ref.part) is None]
        for m in self._measure(result, [p for p in dict.fromkeys(known) if p != result.default_profile]):
            self._move_if_faster(result, m)

    def _move_if_faster(self, result: BucketResult, m: Measurement) -> None:
        """The rule of every move: an eligible profile faster than the best by more than --min-gain."""
        if m.eligible and m.ms < result.best.ms * (1 - self.args.min_gain):
            result.best = m

    def _sweep(self, result: BucketResult, name: str) -> bool:
        """Measure the new values of one field around the current best; True if the best moved."""
        start, batch = result.best.profile, []
        for cand in sweep_candidates(start, name, result.task.key, self.device):
            short = cand.short()
            if short in result.measured or short in result.pruned or cand in batch:
                continue
            reason = prune_reason(cand, result.task.key, self.device, result.task.ref.part)
            if reason:
                result.pruned[short] = reason
            else:
                batch.append(cand)
        recorded = self.store.recorded(result.task)
        spent = len(result.measured.keys() | recorded)
        for m in self._measure(result, within_budget(batch, recorded, spent, self.args.max_candidates)):
            self._move_if_faster(result, m)
        return getattr(result.best.profile, name) != getattr(start, name)

    def _measure(self, result: BucketResult, profiles: list[LaunchProfile]) -> list[Measurement]:
        task = result.task
        found = {p: self.store.get(task, p) for p in profiles}
        todo = [p for p in profiles if found[p] is None]
        if len(self.pool) and len(todo) > 1:
            self._set_up(result)
            self.progress.show(self.done, task.label, f"compiling {len(todo)} candidates")
            inputs = {"op": "run", "measure": False, "kernel": task.key.kernel, "part": task.ref.part,
                      "signature": self.signature,
                      "signature_id": "zeros " + task.bucket_id}
            for i in range(0, len(todo), len(self.pool)):
                chunk = todo[i: i + len(self.pool)]
                replies = exchange([(w, inputs | {"profile": p.to_dict()}) for w, p in zip(self.pool, chunk)],
                                   self.args.timeout)
                for p, reply in zip(chunk, replies):
                    if reply["status"] in ("error", *FAILED):
                        found[p] = Measurement.from_reply(p, reply, "compile")
                        self.store.add(task, found[p])
        for p in profiles:
            if found[p] is None:
                self._set_up(result)
                self.progress.show(self.done + len(result.measured) / self.args.max_candidates, task.label,
                                   f"candidate {len(result.measured) + 1}: {p.short()}")
                [reply] = exchange([(self.timer, {"op": "run", "profile": p.to_dict(), "measure": True})],
                                   self.args.timeout)
                found[p] = Measurement.from_reply(p, reply, "time")
                self.store.add(task, found[p])
            result.measured[p.short()] = found[p]
        return [found[p] for p in profiles]

    def _set_up(self, result: BucketResult) -> None:
        """Give the timing worker this bucket's inputs, reference and default output (once per worker life)."""
        task = result.task
        if self.timer.alive and self.timer.setup_id == task.bucket_id:
            return
        self.progress.show(self.done, task.label, "building inputs and the float64 reference")
        msg = {"op": "setup", "id": task.bucket_id, "case": dataclasses.asdict(task.ref), "seed": self.args.seed,
               "default": result.default_profile.to_dict(), "warmup_ms": self.args.warmup_ms, "rep_ms": self.args.rep_ms}
        short_key = dispatch.short_part_key(task.key) if task.ref.part is None else None
        short = self.short_best.get(json.dumps(short_key.bucket(), sort_keys=True)) if short_key else None
        if short is not None:  # else the worker takes the dispatcher's choice for the short launch
            msg["short"] = short.to_dict()
        [reply] = exchange([(self.timer, msg)], self.args.timeout * SETUP_TIMEOUT_FACTOR)
        if reply["status"] != "ok":
            raise BucketError(f"setting up the case failed ({reply['status']}): {reply.get('error')}")
        if reply["key"] != task.key.bucket():
            raise BucketError(f"the built inputs give shape key {reply['key']}, the plan expected {task.key.bucket()}")
        self.timer.setup_id, self.signature = task.bucket_id, reply["signature"]


# --------------------------------------------------------------------------- table and report


def command_line(args: argparse.Namespace) -> str:
    """The options that define what was tuned, as a command line (for the table and report)."""
    parts = ["pagedattn tune"]
    if args.kernel:
        parts.append(f"--kernel {args.kernel}")
    if args.workload:
        parts.append(f"--workload {' '.join(args.workload)}")
    if args.tiny:
        parts.append("--tiny")
    if args.match:
        parts.append(f"--match {shlex.quote(args.match)}")
    if args.rows:
        parts.append(f"--rows {','.join(map(str, args.rows))}")
    parts += [f"--first-guess {p.short()}" for p in args.first_guess]
    parts.append(f"--max-candidates {args.max_candidates} --seed {args.seed} --rep-ms {args.rep_ms:g}")
    return " ".join(parts)


def _ident(entry: dict) -> str:
    return json.dumps(entry["key"], sort_keys=True)


def _entry_order(entry: dict) -> list:
    return [entry["key"][k] for k in sorted(entry["key"])]


def _entry_lines(entries: list[dict]) -> str:
    return ",\n".join("  " + json.dumps(e) for e in entries)  # one entry per line keeps diffs readable


def write_table(results: list[BucketResult], device: DeviceInfo, args: argparse.Namespace) -> Path:
    """Write the tuned entries into the device table, keeping the other entries still valid and
    moving stale ones (older kernel sources or Triton) to "previous", the tuner's first guesses.
    Each entry names the command of the pass that measured it (a table tuned in several passes
    keeps every pass's); meta's command is the last pass."""
    path = tables.table_path(device.name, args.table_dir)
    command = command_line(args)
    new = [{"key": r.task.key.bucket(), "profile": r.best.profile.to_dict(), "speedup": round(r.speedup, 4),
            "default_ms": r.default.ms, "tuned_ms": r.best.ms, "bitwise": r.best.bitwise, "rel_l2": r.best.rel_l2,
            "default_profile": r.default_profile.to_dict(), "case": r.task.label, "command": command}
           for r in results if not r.error]
    new_ids = {_ident(e) for e in new}
    hashes = {r.task.key.kernel: tables.kernel_hash(r.task.key.kernel) for r in results}
    names, kept = {r.task.ref.workload for r in results}, []
    old = json.loads(path.read_text()) if path.exists() else {"meta": {}, "entries": []}
    same_triton = old["meta"].get("triton") == triton.__version__
    stale = {_ident(e): e for e in old.get("previous", [])}
    for entry in old["entries"]:
        kernel = entry["key"]["kernel"]
        current = same_triton and old["meta"].get("kernel_hash", {}).get(kernel) == tables.kernel_hash(kernel)
        if current and _ident(entry) not in new_ids:
            kept.append(entry)
            hashes[kernel] = tables.kernel_hash(kernel)
        elif not current:
            stale[_ident(entry)] = entry
    if same_triton:
        names |= set(old["meta"].get("workloads", []))
    entries = sorted(kept + new, key=_entry_order)
    previous = sorted((e for i, e in stale.items() if i not in new_ids), key=_entry_order)
    meta = {"device": device.name, "triton": triton.__version__, "kernel_hash": hashes,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "workloads": sorted(names), "command": command}
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_suffix(".json.tmp")
    scratch.write_text(f'{{"meta": {json.dumps(meta, indent=1)},\n "entries": [\n{_entry_lines(entries)}\n ],\n'
                       f' "previous": [\n{_entry_lines(previous)}\n ]}}\n')
    os.replace(scratch, path)
    tables.clear_cache()
    return path


def blocklist_suggestion(r: BucketResult, m: Measurement, device: DeviceInfo) -> str:
    key, why = r.task.key, f"{m.status} in pagedattn tune on {device.name}: {m.error[:120]}"
    return (f'Blocked("{key.kernel}", When(archs=("{device.arch}",), kv_dtypes=("{key.kv_dtype}",), '
            f"groups=({key.group},)), {m.profile.to_dict()!r}, {why!r}),")


def _swept(task: Task) -> int:
    return task.key.num_tokens if task.key.kernel == "sparse" else task.key.kv_len


def render_report(results: list[BucketResult], device: DeviceInfo, args: argparse.Namespace) -> str:
    hashes = ", ".join(f"{k} `{tables.kernel_hash(k)}`" for k in sorted({r.task.key.kernel for r in results}))
    lines = [f"# Launch profiles: {device.name}", "",
             f"`{command_line(args)}` — Triton {triton.__version__}, torch {torch.__version__}, kernel hashes {hashes}, "
             f"{datetime.date.today().isoformat()}.", "",
             "Speedup: the default's time (the profile the dispatcher picks without a table: the arch's rules over the "
             "analytic default) / tuned profile time (medians). Bitwise: the tuned output equals the default profile's "
             "output bit for bit. rel-L2: against the float64 reference."]
    if not timing.timings_meaningful():
        lines += ["", "**Measured under the Triton interpreter: the times are host-clock times and mean nothing.**"]
    families: dict[tuple, list[BucketResult]] = collections.defaultdict(list)
    for r in results:
        families[(r.task.key.kernel, r.task.ref.workload, re.sub(r"\b(?:kv|rows)=\d+\s*", "", r.task.label))].append(r)
    lines += ["", "## Per shape", "", "| kernel | workload | shape | headline | speedup | min–max over the sweep | "
              "bitwise | rel-L2 | profile | tried / pruned / faulted |", "|---|---|---|---|---|---|---|---|---|---|"]
    for (kernel, workload, shape), group in families.items():
        ok = sorted((r for r in group if not r.error), key=lambda r: _swept(r.task))
        counts = (f"{sum(len(r.measured) for r in group)} / {sum(len(r.pruned) for r in group)} / "
                  f"{sum(r.count(*FAILED) for r in group)}")
        if not ok:
            lines.append(f"| {kernel} | {workload} | {shape} | – | failed | – | – | – | – | {counts} |")
            continue
        unit, sizes, speedups = "rows" if kernel == "sparse" else "KV", [_swept(r.task) for r in ok], [r.speedup for r in ok]
        head = next((r for r in ok if kernel == "sparse" and _swept(r.task) == HEADLINE_ROWS), ok[-1])
        same = sum(bool(r.best.bitwise) for r in ok)
        bitwise = "yes" if same == len(ok) else "no" if same == 0 else f"no ({same}/{len(ok)} yes)"
        lines.append(f"| {kernel} | {workload} | {shape} | {unit} {_swept(head.task)} | {head.speedup:.2f}× | "
                     f"{min(speedups):.2f}–{max(speedups):.2f}× ({unit} {min(sizes)}–{max(sizes)}) | {bitwise} | "
                     f"{max(r.best.rel_l2 for r in ok):.1e} | `{head.best.profile.short()}` | {counts} |")
    lines += ["", "## Per bucket", "", "| kernel | case | default | tuned | default ms | tuned ms | speedup | bitwise | "
              "rel-L2 | tried | pruned | faulted | timeout |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        case = r.task.label + "".join(f" (= {m})" for m in r.task.merged)
        counts = f"{len(r.measured)} | {len(r.pruned)} | {r.count('faulted')} | {r.count('timeout')}"
        if r.error:
            lines.append(f"| {r.task.key.kernel} | {case} | `{r.default_profile.short()}` | failed: {r.error} | "
                         f"– | – | – | – | – | {counts} |")
        else:
            lines.append(f"| {r.task.key.kernel} | {case} | `{r.default_profile.short()}` | `{r.best.profile.short()}` | "
                         f"{r.default.ms:.4f} | {r.best.ms:.4f} | {r.speedup:.2f}× | {'yes' if r.best.bitwise else 'no'} | "
                         f"{r.best.rel_l2:.1e} | {counts} |")
    reasons = collections.Counter(reason_kind(why) for r in results for why in r.pruned.values())
    if reasons:
        lines += ["", "## Pruned candidates", ""] + [f"- {n} × {why}" for why, n in reasons.most_common()]
    faults = [blocklist_suggestion(r, m, device) for r in results for m in r.measured.values() if m.status in FAILED]
    if faults:
        lines += ["", "## Faults (suggested rows for `BLOCKLIST` in `profiles/rules.py`)", "", "```python", *faults, "```"]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- entry points


@dataclass
class TuneSummary:
    results: list[BucketResult]
    table: Path
    report: Path
    measured: int  # candidates run in this invocation
    reused: int  # candidates taken from the results file
    interrupted: bool = False  # SIGINT / Ctrl-C before every bucket was tuned


def run_tuning(args: argparse.Namespace) -> TuneSummary:
    """Tune every bucket of the selected workloads; write the results, the table and the report."""
    fault_injections()  # reject a malformed PAGEDATTN_TUNE_FAULT before any worker starts
    device = DeviceInfo.current()
    if args.jobs is None:
        args = argparse.Namespace(**vars(args) | {"jobs": min(8, os.cpu_count() or 1) if timing.timings_meaningful() else 0})
    tasks = plan_tasks(args)
    store = ResultStore(args.results or Path(f"tune-results-{device.name}.jsonl"), device.name)
    progress = Progress(len(tasks), not args.quiet)
    tuner = Tuner(args, device, store, progress)
    results: list[BucketResult] = []
    interrupted = False
    try:
        for task in tasks:
            results.append(tuner.tune(task))
    except KeyboardInterrupt:  # a time box ran out: keep what finished, the results file resumes the rest
        interrupted = True
    finally:
        tuner.close()
        progress.finish()
    if not results:
        raise KeyboardInterrupt
    table = write_table(results, device, args)
    report = args.report or Path("docs") / f"profiles-{device.name}.md"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(render_report(results, device, args))
    return TuneSummary(results, table, report, store.added, store.reused, interrupted)


def print_plan(args: argparse.Namespace) -> None:
    if args.device and args.device not in KNOWN_DEVICES:
        raise ValueError(f"--device must be one of {', '.join(KNOWN_DEVICES)}, got {args.device!r}")
    device = KNOWN_DEVICES[args.device] if args.device else DeviceInfo.current()
    print(f"candidate space on {device.name}: the first sweep of the coordinate search, around the default")
    for task in plan_tasks(args):
        candidates, pruned, fit, space = plan_case(task, device)
        print(f"\n{task.key.kernel} {task.ref.workload}: {task.label}   default {candidates[0].short()}")
        print(f"  {len(candidates)} candidates, {sum(pruned.values())} pruned; full space {fit} of {space} after pruning")
        print("  " + " ".join(p.short() for p in candidates))
        print("".join(f"  pruned {n} x {why}\n" for why, n in pruned.most_common()), end="")


def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers, got {text!r}")
    return values


def _profile_arg(text: str) -> LaunchProfile:
    try:
        return LaunchProfile.from_short(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--kernel", choices=KERNELS, help="tune this kernel (default: the kernels of the workloads)")
    add("--workload", nargs="+", default=[], metavar="NAME", help="workloads to tune (default: all of --kernel, or all)")
    add("--tiny", action="store_true", help="use the workloads' tiny cases (CPU interpreter)")
    add("--match", metavar="TEXT", help="only cases whose label contains TEXT")
    add("--rows", type=_int_list, default=(), metavar="N,N,...",
        help="sparse row counts to sweep, one bucket each (e.g. 520,1024,2048,4096,8192,16384)")
    add("--max-candidates", type=int, default=20, metavar="N",
        help="measurements per bucket, earlier runs' records included (default 20)")
    add("--first-guess", type=_profile_arg, action="append", default=[], metavar="PROFILE",
        help="also start from this profile (e.g. m128/n64/s1/w8/st3/ahead, from an A/B) in every bucket it fits")
    add("--jobs", type=int, metavar="N", help="parallel compile workers (default: min(8, CPUs) on a GPU, else 0)")
    add("--timeout", type=float, default=60.0, metavar="S",
        help=f"seconds a candidate may take before it counts as hung (case set-up: {SETUP_TIMEOUT_FACTOR}x)")
    add("--seed", type=int, default=0, help="seed of the random inputs")
    add("--warmup-ms", type=float, default=10.0, help="timing warm-up per candidate")
    add("--rep-ms", type=float, default=30.0, help="timing repetitions per candidate, in ms")
    add("--min-gain", type=float, default=0.02, help="fraction by which a candidate must beat the current best")
    add("--results", type=Path, help="JSON-lines results file, resumed (default tune-results-<device>.jsonl)")
    add("--table-dir", type=Path, help=f"directory of the device tables (default {tables.TABLE_DIR})")
    add("--report", type=Path, help="Markdown report (default docs/profiles-<device>.md)")
    add("--dry-run", action="store_true", help="list the candidate space per case and run nothing")
    add("--device", metavar="NAME", help="with --dry-run: prune for this known device instead of the current one")
    add("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(func=run)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="pagedattn tune")
    add_arguments(parser)
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> int:
    try:
        if args.device and not args.dry_run:
            raise ValueError("--device applies to --dry-run only; a tuning run measures the current device")
        if args.max_candidates < 1 or args.timeout <= 0 or (args.jobs or 0) < 0:
            raise ValueError("--max-candidates must be >= 1, --timeout > 0 and --jobs >= 0")
        if args.dry_run:
            print_plan(args)
            return 0
        summary = run_tuning(args)
    except ValueError as exc:
        print(f"pagedattn tune: error: {exc}", file=sys.stderr)
        return 2
    results, device = summary.results, DeviceInfo.current()
    if summary.interrupted:
        print("interrupted: the table and report hold the buckets finished before the interrupt")
    print(f"tuned {sum(not r.error for r in results)} of {len(results)} buckets: {summary.measured} candidates measured, "
          f"{summary.reused} reused from the results file, {sum(len(r.pruned) for r in results)} pruned, "
          f"{sum(r.count('faulted') for r in results)} faulted, {sum(r.count('timeout') for r in results)} timed out")
    for r in results:
        if r.error:
            print(f"  failed: {r.task.key.kernel} {r.task.label}: {r.error}")
    faults = [blocklist_suggestion(r, m, device) for r in results for m in r.measured.values() if m.status in FAILED]
    if faults:
        print("suggested blocklist rows (BLOCKLIST in pagedattn/profiles/rules.py):\n  " + "\n  ".join(faults))
    print(f"table:  {summary.table}\nreport: {summary.report}")
    if summary.interrupted:
        return 130
    return 0 if any(not r.error for r in results) else 1
