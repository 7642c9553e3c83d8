"""v41 call 1: the streaming merge (stream_merge.py, build/v41's probes of both Gluon unified kernels) against the
library's kernels and merge, on the bench cases whose gaps are open and the split cases beside them, with the
profiles the library's dispatcher picks on this GPU (its table where a bucket matches, else the rules).
Per case: base, stream and stream_wait (the same kernels, the merge waiting for the whole attention kernel with
`griddepcontrol.wait` before its first poll: what the workers' release and flags cost without any polling beside
them) each checked on a NaN-prefilled output against float64 (input set 0), then timed alternately with `nomerge`
(the base kernel without any merge: the floor a merge beside the kernel could reach, its output not checked) by
graph timing over the rotated input sets, min of 5 rounds. After the timing (the call's
number advanced hundreds of times), stream is checked again on input set 1, then through a CUDA graph captured on
set 0 and replayed twice, q redrawn in place between the replays, each replay checked against its own float64
reference; and the merge's end counter must be back at 0. Then base and stream replayed back to back for 3 s on
BF16 MTP 16q/1kv 32,768 keys (`ab_probe.sustained`), beside the caller's nvidia-smi log: the energy per call.
Usage: stream_ab.py OUT.jsonl SUSTAINED.jsonl"""
import functools
import json
import sys

sys.path.insert(0, "scripts")
from ab_probe import checked_output, sustained, unified_variant  # noqa: E402
import torch  # noqa: E402
import stream_merge  # noqa: E402
import ukr_stream  # noqa: E402
import vw_stream  # noqa: E402
from pagedattn import reference, workloads  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.device import DeviceInfo  # noqa: E402
from pagedattn.ops import common, unified_keys_rows, verify_wgmma  # noqa: E402
from pagedattn.profiles import select  # noqa: E402
from pagedattn.timing import time_calls  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402

CASES = ("q=1 kv=131072 16q/1kv d256 fp8", "q=4 kv=131072 16q/1kv d256 fp8",
         "kv=32768 16q/1kv d256 bf16", "kv=70000 16q/1kv d256 bf16", "kv=32768 32q/2kv d256 bf16",
         "kv=32768 16q/1kv d256 fp8", "kv=70000 16q/1kv d256 fp8")


def no_merge(module):
    """The base launcher with its merge skipped (timing only)."""
    def launch(*args, **kwargs):
        saved = module.launch_merge
        module.launch_merge = lambda *a, **k: None
        try:
            module_launch(module)(*args, **kwargs)
        finally:
            module.launch_merge = saved
    return launch


def waiting(fn):
    """`fn` with the merge waiting for the whole kernel (`griddepcontrol.wait`) before its first poll."""
    def call(kw, out):
        stream_merge.wait_for_kernel = True
        try:
            fn(kw, out)
        finally:
            stream_merge.wait_for_kernel = False
    return call


def module_launch(module):
    return module.launch_verify_wgmma if hasattr(module, "launch_verify_wgmma") else module.launch_unified_keys_rows


def variants(case):
    chosen = select.select_profile(case_shape_key(case), DeviceInfo.current())
    profile = chosen.profile
    base, stream = (verify_wgmma, vw_stream) if profile.warpgroup_mma else (unified_keys_rows, ukr_stream)
    print(case.label, chosen.source, profile.short(), flush=True)
    streaming = unified_variant(module_launch(stream), profile)
    return profile, {"base": unified_variant(module_launch(base), profile), "stream": streaming,
                     "stream_wait": waiting(streaming), "nomerge": unified_variant(no_merge(base), profile)}


def graph_checks(fn, kwargs) -> list:
    """stream through a CUDA graph captured on `kwargs`: two replays, q redrawn in place between them, each
    checked against its own float64 reference (rel-L2, any NaN)."""
    out = torch.full_like(kwargs["q"], float("nan"))
    fn(kwargs, out)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn(kwargs, out)
    checks = []
    for _ in range(2):
        kwargs["q"].normal_()
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        checks.append((reference.rel_l2(out, reference.unified_attention(**kwargs)), bool(out.isnan().any())))
    return checks


def main() -> None:
    cases = [c for c in workloads.get_workload("long-request").cases + workloads.get_workload("mtp-verify").cases
             if any(c.label.endswith(k) for k in CASES)]
    with open(sys.argv[1], "w") as f:
        for case in cases:
            profile, fns = variants(case)
            sets = _input_sets(case, "cuda")
            expected = reference.unified_attention(**sets[0].kwargs)
            checks = {name: checked_output(fns[name], sets[0].kwargs, expected) for name in ("base", "stream", "stream_wait")}
            times = {name: [] for name in fns}
            for _ in range(5):
                for name, fn in fns.items():
                    times[name].append(time_calls([lambda s=s, fn=fn, o=torch.empty_like(s.kwargs["q"]):
                                                   fn(s.kwargs, o) for s in sets]))
            later = sets[1] if len(sets) > 1 else sets[0]
            checks["stream_after"] = checked_output(fns["stream"], later.kwargs,
                                                    reference.unified_attention(**later.kwargs))
            checks["stream_graph"] = graph_checks(fns["stream"], sets[0].kwargs)
            splits, rows, heads = profile.num_splits, sets[0].kwargs["q"].shape[0], sets[0].kwargs["q"].shape[1]
            _, sync = stream_merge.stream_workspace(splits, rows, heads, 256, "cuda:0")
            row = {"case": case.label, "profile": profile.short(), "bytes": sets[0].bytes_moved,
                   "ms": {name: min(t) for name, t in times.items()}, "ms_all": times, "checks": checks,
                   "sync": sync.tolist()}
            print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
            f.write(json.dumps(row) + "\n")
            del sets
            torch.cuda.empty_cache()
    case = next(c for c in cases if c.label.endswith("kv=32768 16q/1kv d256 bf16"))
    _, fns = variants(case)
    sets = _input_sets(case, "cuda")
    out = torch.empty_like(sets[0].kwargs["q"])
    with open(sys.argv[2], "w") as f:
        for name in ("base", "stream", "base", "stream"):
            start, end, rate = sustained(functools.partial(fns[name], sets[0].kwargs, out), seconds=3.0)
            row = {"variant": name, "start": start, "end": end, "ms_sustained": 1e3 / rate}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    assert common.launch_merge is verify_wgmma.launch_merge
    main()
