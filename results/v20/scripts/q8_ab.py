"""Verify with 8 draft tokens (B=20, 16q/1kv, D=256): each tree's own choice (profile=None: no table bucket,
so the sm90 rules) timed like the bench. argv: OUT.jsonl TREE..."""
import json, os, subprocess, sys
CHILD = r'''
import json, sys
import pagedattn
from pagedattn import reference
from pagedattn.api import choose_unified_profile
from pagedattn.bench import _input_sets
from pagedattn.timing import time_calls
from pagedattn.workloads import Case, UnifiedShape
for pages in ("fp8", "bf16"):
    for kv in (2048, 8192, 32768):
        case = Case(f"B=20 q=8 kv={kv} 16q/1kv d256 {pages}", UnifiedShape((8,) * 20, (kv,) * 20, 16, 1, 256, 16, kv_dtype=pages))
        sets = _input_sets(case, "cuda")
        kw = sets[0].kwargs
        chosen = choose_unified_profile(kw["q"], kw["k_cache"], kw["block_table"], 8, kw.get("max_seqlen_k"))
        out = pagedattn.unified_attention(**kw)
        err = reference.rel_l2(out, reference.unified_attention(**kw))
        ms = time_calls([lambda k=s.kwargs: pagedattn.unified_attention(**k) for s in sets])
        print(json.dumps({"tree": sys.argv[1], "module": pagedattn.__file__, "case": case.label, "profile": chosen.profile.short(), "source": chosen.source,
                          "ms": ms, "tbps": sets[0].bytes_moved / ms / 1e9, "rel_l2": err}), flush=True)
'''
with open(sys.argv[1], "w") as f:
    for tree in sys.argv[2:]:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
        r = subprocess.run([sys.executable, "-c", CHILD, tree], env=env, capture_output=True, text=True, timeout=240,
                           cwd=os.path.abspath(tree))
        sys.stderr.write(r.stderr[-2000:])
        f.write(r.stdout); print(r.stdout, flush=True)
