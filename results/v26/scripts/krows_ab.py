"""v26 call 4: the sparse keys-as-rows kernel with the growth decision by a warp vote (the tree) against
commit 82c26f8's (build/v26/krows_c2.py: that file with its relative imports made absolute), same
profiles: the FP8 cases of the sparse bench where the kernel can run (groups <= 16 at 64 rows,
groups <= 8 at 520 and 8,192 rows). `scripts/ab_probe.check_and_time`. Usage: krows_ab.py OUT.jsonl"""
import json, sys
import torch
sys.path.insert(0, "scripts")
sys.path.insert(0, "build/v26")
from ab_probe import check_and_time  # noqa: E402
from pagedattn import reference, workloads  # noqa: E402
from pagedattn.bench import _input_sets  # noqa: E402
from pagedattn.ops import sparse_keys_rows as new  # noqa: E402
from pagedattn.profiles.types import LaunchProfile  # noqa: E402
import krows_c2 as old  # noqa: E402


def launcher(launch, prof, scale):
    def call(kw, o):
        launch(kw["q"], kw["k_cache"], kw["v_cache"], o, kw["indices"], kw["block_table"], kw["token_to_req"], None,
               softmax_scale=scale, k_scale=kw["k_scale"], v_scale=kw["v_scale"], profile=prof)
    return call


with open(sys.argv[1], "w") as f:
    for wl, splits in (("sparse-decode", 2), ("sparse-prefill", 1)):
        for case in workloads.get_workload(wl).cases:
            shape = case.shape
            if shape.kv_dtype != "fp8" or (shape.rows > 64 and shape.group > 8):
                continue
            prof = LaunchProfile(16, 64, splits, 4, 2, keys_as_rows=True)
            scale = shape.head_size ** -0.5
            variants = {f"old/{prof.short()}": launcher(old.launch_sparse_keys_rows, prof, scale),
                        f"new/{prof.short()}": launcher(new.launch_sparse_keys_rows, prof, scale)}
            sets = _input_sets(case, "cuda")
            row = {"case": case.label, **check_and_time(variants, sets, reference.sparse_attention(**sets[0].kwargs))}
            print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
            f.write(json.dumps(row) + "\n")
            del sets
            torch.cuda.empty_cache()
