"""pagedattn vs the float64 reference on the batch shapes transformers' continuous batching sends
(page 256, head size 256, GQA 16: 32q/2kv on one device, 16q/1kv per rank under 2-way TP): prefill
chunks of a few prompts, a decode batch, and decode + prefill mixed, each with the dispatcher's profile.
Exit status 1 when any rel-L2 reaches 1e-2 (or an output has NaN).

    PYTHONPATH=. python3 scripts/check_serving_shapes.py [--small]      # --small: CPU-sized prompts
    PYTHONPATH=. python3 scripts/check_serving_shapes.py --small --as-device NVIDIA_H200

The profile of each call is the one the dispatcher chooses for this device, or with --as-device for
the named one (its tuned table), passed explicitly: on a CPU machine that checks a GPU's table
entries under the interpreter. A profile of a Gluon kernel (sm90 only; since v23 the H200 rules
send BF16 decode at head size 256 to the warpgroup-MMA kernel) cannot run under the interpreter:
its line says so and the GPU suite checks that kernel.
"""

import argparse
import math
import random

import torch

import pagedattn
from pagedattn import api, reference
from pagedattn.device import KNOWN_DEVICES, DeviceInfo
from pagedattn.profiles.select import device_problem, select_profile
from pagedattn.workloads import UnifiedShape


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="prompts of 8-40 tokens, 6 decode sequences")
    parser.add_argument("--as-device", choices=sorted(KNOWN_DEVICES), help="use the profiles this device would choose")
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    target = KNOWN_DEVICES[args.as_device] if args.as_device else DeviceInfo.current()
    rng = random.Random(0)
    longest, decodes = (40, 6) if args.small else (512, 64)
    worst = 0.0
    for q_heads, kv_heads in ((32, 2), (16, 1)):
        prompts = [rng.randint(8, longest) for _ in range(4)]
        contexts = [rng.randint(9, longest + 32) for _ in range(decodes)]
        for name, q_lens, kv_lens in (("prefill", prompts, prompts), ("decode", [1] * decodes, contexts),
                                      ("mixed", [1] * decodes + prompts[:2], contexts + prompts[:2])):
            shape = UnifiedShape(tuple(q_lens), tuple(kv_lens), q_heads, kv_heads, 256, block_size=256)
            kw = shape.build(device, seed=3).kwargs
            key = api.unified_shape_key(kw["q"], kw["k_cache"], kw["block_table"], kw["max_seqlen_q"], max(kv_lens),
                                        api.has_score_mods(**kw))
            chosen = select_profile(key, target)
            not_here = device_problem(chosen.profile, DeviceInfo.current())
            if not_here:
                print(f"{q_heads}q/{kv_heads}kv {name:8s} not run here ({not_here})  {chosen.source}: "
                      f"{chosen.profile.short()}", flush=True)
                continue
            out = pagedattn.unified_attention(**kw, out=torch.full_like(kw["q"], float("nan")), profile=chosen.profile)
            err = reference.rel_l2(out, reference.unified_attention(**kw))
            worst = max(worst, err if not math.isnan(err) else float("inf"))
            print(f"{q_heads}q/{kv_heads}kv {name:8s} rel-L2 {err:.2e}  {chosen.source}: {chosen.profile.short()}",
                  flush=True)
    print(f"worst rel-L2 {worst:.2e} ({'ok' if worst < 1e-2 else 'FAIL'})")
    return 0 if worst < 1e-2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
