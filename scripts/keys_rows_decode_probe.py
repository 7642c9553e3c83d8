"""Probe (next session): would the keys-as-rows layout pay for unified FP8 decode / long requests?

The FP8 single long request (B=1, q=1, 131,072 keys, 16q/1kv, D=256) takes 41.4 us on the unified Triton
kernel (m16/n64/s256/st3) = 35 % of the read ceiling; 256 programs each walk 512 keys in 16/64-key tiles
and the time is the per-program chain (perf-notes v15 item 2, §6 item 3). The sparse keys-as-rows kernel
(ops/sparse_keys_rows.py) runs 64 keys per wgmma with the 16 heads as N and no K conversion. Feeding it
every position of the sequence as the row's selection (indices = arange(kv_len)) computes the same
attention (one query token: no causal mask inside its keys), so its time bounds what a unified
keys-as-rows decode kernel could do (minus the index reads: 4 bytes per key, 0.5 MB of 67 MB).

    PYTHONPATH=. python3 scripts/keys_rows_decode_probe.py OUT.jsonl [--tiny]

--tiny runs the workload's tiny case with a Triton sparse profile under the CPU interpreter (plumbing
only). Sparse profiles above select.MAX_SPLITS["sparse"] (16) are passed explicitly.
"""

import json
import sys

import torch

import pagedattn
from pagedattn import LaunchProfile, reference
from pagedattn.bench import _input_sets
from pagedattn.timing import time_calls
from pagedattn.workloads import get_workload

LABEL = "B=1 q=1 kv=131072 16q/1kv d256 fp8"


def sparse_kwargs(kwargs: dict) -> dict:
    """The unified call's inputs as a sparse call whose one row selects every key of its sequence."""
    kv_len = int(kwargs["seq_lens"][0])
    device = kwargs["q"].device
    return {"q": kwargs["q"], "k_cache": kwargs["k_cache"], "v_cache": kwargs["v_cache"],
            "indices": torch.arange(kv_len, dtype=torch.int32, device=device)[None, :],
            "block_table": kwargs["block_table"][:1], "token_to_req": torch.zeros(1, dtype=torch.int32, device=device),
            "softmax_scale": kwargs.get("softmax_scale"), "k_scale": kwargs.get("k_scale"),
            "v_scale": kwargs.get("v_scale")}


def main() -> int:
    out_path, tiny = sys.argv[1], "--tiny" in sys.argv
    workload = get_workload("long-request")
    case = next(c for c in (workload.tiny if tiny else workload.cases) if tiny or c.label == LABEL)
    device = "cpu" if tiny else "cuda"
    sets = _input_sets(case, device)
    expected = reference.unified_attention(**sets[0].kwargs)
    shorts = (["m16/n16/s2/w4/st2"] if tiny else
              [f"m16/n64/s{s}/w4/st{st}/keysrows" for s in (32, 64, 128, 256) for st in (2, 3)])
    rows = []
    unified_out = pagedattn.unified_attention(**sets[0].kwargs)
    unified_calls = [lambda k=s.kwargs: pagedattn.unified_attention(**k) for s in sets]
    rows.append({"kernel": "unified (table)", "ms": time_calls(unified_calls),
                 "rel_l2": reference.rel_l2(unified_out, expected)})
    sparse_sets = [sparse_kwargs(s.kwargs) for s in sets]
    for short in shorts:
        profile = LaunchProfile.from_short(short)
        out = pagedattn.sparse_attention(**sparse_sets[0], out=torch.full_like(sets[0].kwargs["q"], float("nan")),
                                         profile=profile)
        calls = [lambda k=k: pagedattn.sparse_attention(**k, profile=profile) for k in sparse_sets]
        rows.append({"kernel": f"sparse {short}", "ms": time_calls(calls), "rel_l2": reference.rel_l2(out, expected)})
    with open(out_path, "w") as f:
        for row in rows:
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
