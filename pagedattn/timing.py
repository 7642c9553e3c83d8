"""Timing shared by the benchmark and the tuner.

On a GPU: medians after warm-up, over a rotation of input sets so that the sets together exceed the
L2 cache (a kernel timed on one small input set measures the cache, not HBM). Calls are captured
in a CUDA graph and replayed (`triton.testing.do_bench_cudagraph`), as engines run decode: timed
eagerly, a sub-millisecond kernel also measures the host's argument checks, dispatch and launch,
which showed up on the H200 as spreads of up to +-72 % between two timings of the same call. A
call that cannot be captured is timed eagerly with `do_bench`. Under the interpreter timings mean
nothing; `time_calls` still runs the calls (so the code path is exercised) and returns a
host-clock median marked as such by `timings_meaningful`.
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Callable

import torch

from .device import DeviceInfo
from .interpreter import interpreter_active


def timings_meaningful() -> bool:
    return torch.cuda.is_available() and not interpreter_active()


def rotation_count(bytes_per_set: int, device: DeviceInfo, max_sets: int = 8) -> int:
    """How many distinct input sets keep the working set at >= 3x L2 (1 if one set already is)."""
    if bytes_per_set <= 0 or device.l2_bytes <= 0:
        return 1
    need = -(-3 * device.l2_bytes // bytes_per_set)
    return max(1, min(max_sets, need))


def time_calls(calls: list[Callable[[], object]], warmup_ms: float = 25.0, rep_ms: float = 100.0) -> float:
    """Median milliseconds of one call, cycling through `calls` (one per rotated input set)."""
    state = {"i": 0}

    def step():
        fn = calls[state["i"] % len(calls)]
        state["i"] += 1
        fn()

    if not timings_meaningful():
        samples = []
        for _ in range(max(1, len(calls))):
            t0 = time.perf_counter()
            step()
            samples.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(samples)
    import triton.testing

    step()  # compile and allocate outside the capture
    torch.cuda.synchronize()
    try:
        return float(triton.testing.do_bench_cudagraph(step, rep=rep_ms, return_mode="median"))
    except RuntimeError as exc:  # not capturable (host syncs in the call): time it eagerly, and say so
        print(f"time_calls: CUDA-graph capture failed, timing eagerly ({str(exc).splitlines()[0][:160]})",
              file=sys.stderr, flush=True)
        torch.cuda.synchronize()
        _end_generator_capture()
        return float(triton.testing.do_bench(step, warmup=warmup_ms, rep=rep_ms, return_mode="median"))


def _end_generator_capture() -> None:
    """After a capture that failed inside `torch.cuda.graph`, the default CUDA generator can stay in
    capture mode (the capture's end raised before its epilogue ran), and every later random draw on
    the device raises "Offset increment outside graph capture" (seen in the GPU suite: a test after
    the bench's eager fallback in the same worker, perf-notes v20 item 3). A fresh copy of its state
    (same seed and offset) is not in capture mode."""
    generator = torch.cuda.default_generators[torch.cuda.current_device()]
    generator.graphsafe_set_state(generator.clone_state())
