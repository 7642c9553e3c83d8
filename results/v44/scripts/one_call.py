"""v44: three calls of one build/v44 form on one input set of one request (16q/1kv, head size 256, FP8 pages), at the
dispatcher's profile, for ncu (`--launch-skip 2 --launch-count 1` profiles the third).
Usage: one_call.py FORM QUERIES KEYS"""
import sys
from types import SimpleNamespace

import torch

sys.path.insert(0, "scripts")
from knock_ab import variants  # noqa: E402
from pagedattn import workloads  # noqa: E402

form, queries, keys = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
shape = workloads.UnifiedShape((queries,), (keys,), 16, 1, 256, kv_dtype="fp8")
inputs = shape.build("cuda")
call = variants(SimpleNamespace(shape=shape), [form])[form]
out = torch.empty_like(inputs.kwargs["q"])
for _ in range(3):
    call(inputs.kwargs, out)
torch.cuda.synchronize()
