"""What the GPU A/B probes share: each variant checked once on a NaN-prefilled output against the
float64 reference, then all variants timed alternately (graph timing over the rotated input sets,
`runs` rounds, so that a drift of the GPU's clock spreads over all of them), min per variant.
A variant is a callable (kwargs of one input set, output tensor) -> None; `unified_variant` makes one
from a unified kernel's launcher and a profile."""
import torch

from pagedattn import reference
from pagedattn.timing import time_calls


def check_and_time(variants: dict, sets: list, expected: torch.Tensor, runs: int = 3) -> dict:
    """{"ms": min per variant, "ms_all": every round's time, "rel_l2_nan": (rel-L2 against `expected`,
    whether any output value stayed NaN)} for `variants` on `sets` (`expected` is sets[0]'s)."""
    checks = {}
    for name, fn in variants.items():
        out = torch.full_like(sets[0].kwargs["q"], float("nan"))
        fn(sets[0].kwargs, out)
        torch.cuda.synchronize()
        checks[name] = (reference.rel_l2(out, expected), bool(out.isnan().any()))
    times = {name: [] for name in variants}
    for _ in range(runs):
        for name, fn in variants.items():
            times[name].append(time_calls([lambda s=s, fn=fn, o=torch.empty_like(s.kwargs["q"]): fn(s.kwargs, o)
                                           for s in sets]))
    return {"ms": {name: min(t) for name, t in times.items()}, "ms_all": times, "rel_l2_nan": checks}


def unified_variant(launch, profile):
    """A variant that calls a unified launcher (`launch_unified_keys_rows`'s signature) with `profile`."""
    def call(kw, out):
        launch(kw["q"], kw["k_cache"], kw["v_cache"], out, kw["cu_seqlens_q"], kw["seq_lens"], kw["block_table"],
               max_seqlen_q=kw["max_seqlen_q"], softmax_scale=kw["q"].shape[-1] ** -0.5, k_scale=kw["k_scale"],
               v_scale=kw["v_scale"], profile=profile)
    return call
