"""Offline sm90 builds of the Triton unified and sparse kernels over launch-profile forms: registers,
stack, shared memory. Usage: survey.py SHARD NSHARDS OUT.jsonl"""
import itertools, json, sys
sys.path.insert(0, "scripts")
import compile_report as cr
from pagedattn.profiles.types import LaunchProfile

shard, nshards, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
forms = []
for kernel, head, kv, m, n, w, st in itertools.product(
        ("unified",), (128, 256), ("bf16", "fp8"), (16, 32, 64, 128), (16, 32, 64, 128), (4, 8), (2, 3)):
    if m * head // (32 * w) <= 256:
        forms.append((kernel, kv, head, m, n, w, st))
for kv, m, n, w in itertools.product(("bf16", "fp8"), (16, 32), (16, 32, 64, 128), (2, 4)):
    forms.append(("sparse", kv, 256, m, n, w, 2))
done = set()
try:
    for line in open(out):
        r = json.loads(line); done.add((r["kernel"], r["kv"], r["head"], r["m"], r["n"], r["w"], r["st"]))
except FileNotFoundError:
    pass
forms = [f for f in forms if f not in done]
with open(out, "a") as f:
    for i, (kernel, kv, head, m, n, w, st) in enumerate(forms):
        if i % nshards != shard:
            continue
        group = 16 if head == 256 else 4
        p = LaunchProfile(block_m=m, tile_n=n, num_splits=2, num_warps=w, num_stages=st)
        build = cr.compile_unified if kernel == "unified" else cr.compile_sparse
        try:
            info = build("bf16", kv, min(group, m), head, 16, p, True)
            rec = dict(kernel=kernel, kv=kv, head=head, m=m, n=n, w=w, st=st, regs=info["regs"],
                       stack=info["stack"], smem=info["smem"])
        except Exception as e:  # an infeasible form (shared memory etc.)
            rec = dict(kernel=kernel, kv=kv, head=head, m=m, n=n, w=w, st=st, error=str(e)[:200])
        f.write(json.dumps(rec) + "\n"); f.flush()
