"""What the GPU A/B probes share: each variant checked once on a NaN-prefilled output against the
float64 reference, then all variants timed alternately (graph timing over the rotated input sets,
`runs` rounds, so that a drift of the GPU's clock spreads over all of them), min per variant.
A variant is a callable (kwargs of one input set, output tensor) -> None; `unified_variant` makes one
from a unified kernel's launcher and a profile; `time_unified_case` runs `check_and_time` on a bench case
and records its row; `checked_and_timed` runs it on a unified call's variants and reports failed
checks; `checked_output` is the check alone, `record_check` records it; `sustained` replays a
call back to back for seconds, for power and clock logs (v29 parts_power.py, power_cases.py; v30)."""
import json
import time

import torch

from pagedattn import reference
from pagedattn.bench import _input_sets
from pagedattn.timing import time_calls


def checked_output(fn, kwargs: dict, expected: torch.Tensor, rows=None) -> tuple[float, bool]:
    """(rel-L2 against `expected`, whether any output value stayed NaN) of variant `fn` on `kwargs`,
    written into a NaN-prefilled output; with `rows` (a boolean mask of output rows), on those rows only
    (a launch that writes only some sequences' rows)."""
    out = torch.full_like(kwargs["q"], float("nan"))
    fn(kwargs, out)
    if out.is_cuda:
        torch.cuda.synchronize()
    if rows is not None:
        out, expected = out[rows], expected[rows]
    return reference.rel_l2(out, expected), bool(out.isnan().any())


def record_check(f, failures: list, label: str, fn, kwargs: dict) -> None:
    """`checked_output` of unified variant `fn` against the float64 reference, written to `f` as a JSON
    line {"check", "rel_l2", "nan"}; a NaN or a rel-L2 of 1e-2 or more is also printed and appended to
    `failures`."""
    err, nan = checked_output(fn, kwargs, reference.unified_attention(**kwargs))
    row = {"check": label, "rel_l2": err, "nan": nan}
    f.write(json.dumps(row) + "\n")
    if nan or not err < 1e-2:
        failures.append(row)
        print("FAIL", row, flush=True)


def check_and_time(variants: dict, sets: list, expected: torch.Tensor, runs: int = 3, rows=None) -> dict:
    """{"ms": min per variant, "ms_all": every round's time, "rel_l2_nan": (rel-L2 against `expected`,
    whether any output value stayed NaN)} for `variants` on `sets` (`expected` is sets[0]'s; `rows`:
    `checked_output`'s)."""
    checks = {name: checked_output(fn, sets[0].kwargs, expected, rows) for name, fn in variants.items()}
    times = {name: [] for name in variants}
    for _ in range(runs):
        for name, fn in variants.items():
            times[name].append(time_calls([lambda s=s, fn=fn, o=torch.empty_like(s.kwargs["q"]): fn(s.kwargs, o)
                                           for s in sets]))
    return {"ms": {name: min(t) for name, t in times.items()}, "ms_all": times, "rel_l2_nan": checks}


def checked_and_timed(label: str, variants: dict, sets: list, rows, runs: int):
    """(checks {name: {"rel_l2", "nan"}} on `rows`, min ms per variant, every round's ms) of unified
    `variants` on `sets` (`check_and_time` against the float64 reference of sets[0]); a NaN or a rel-L2 of
    1e-2 or more is printed with `label`."""
    timed = check_and_time(variants, sets, reference.unified_attention(**sets[0].kwargs), runs, rows)
    checks = {name: {"rel_l2": err, "nan": nan} for name, (err, nan) in timed["rel_l2_nan"].items()}
    for name, check in checks.items():
        if check["nan"] or not check["rel_l2"] < 1e-2:
            print("FAIL", label, name, check, flush=True)
    return checks, timed["ms"], timed["ms_all"]


def unified_variant(launch, profile):
    """A variant that calls a unified launcher (`launch_unified_keys_rows`'s signature) with `profile`."""
    def call(kw, out):
        launch(kw["q"], kw["k_cache"], kw["v_cache"], out, kw["cu_seqlens_q"], kw["seq_lens"], kw["block_table"],
               max_seqlen_q=kw["max_seqlen_q"], softmax_scale=kw["q"].shape[-1] ** -0.5, k_scale=kw["k_scale"],
               v_scale=kw["v_scale"], profile=profile)
    return call


def time_unified_case(case, variants: dict, f, runs: int = 3) -> dict:
    """`check_and_time` of `variants` on a unified bench case's rotated input sets (the bench's
    `_input_sets`) against its float64 reference, min of `runs` rounds. The row (label, bytes moved,
    times, checks) is printed without its per-round times and written to `f` as a JSON line; the
    inputs are freed."""
    sets = _input_sets(case, "cuda")
    row = {"case": case.label, "bytes": sets[0].bytes_moved,
           **check_and_time(variants, sets, reference.unified_attention(**sets[0].kwargs), runs)}
    print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
    f.write(json.dumps(row) + "\n")
    del sets
    torch.cuda.empty_cache()
    return row


def sustained(fn, seconds=2.0):
    """Replay a CUDA graph of 20 calls of fn back to back for `seconds`; returns (start, end, calls per s)."""
    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(20):
            fn()
    start = time.time()
    n = 0
    while time.time() - start < seconds:
        graph.replay()
        n += 20
        if n % 200 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    end = time.time()
    return start, end, n / (end - start)
