"""v28 call 6: can the new NaN-past-the-length tests fail? Their shape and poison
(`conftest.poison_past_lengths`), run through call 1's TMA form of the unified keys-as-rows kernel
(build/v28/ukr_tma.py, which zeroes the keys past the length in V after the copy) and through the same
file with that zeroing removed (build/v28/ukr_tma_nofix.py): the first must match the float64
reference, the second must not. Usage: poison_check.py"""
import dataclasses, json, sys
import torch
sys.path.insert(0, "tests")
sys.path.insert(0, "build/v28")
import ukr_tma, ukr_tma_nofix  # noqa: E402
from conftest import poison_past_lengths  # noqa: E402
from pagedattn import reference  # noqa: E402
from pagedattn.profiles.types import LaunchProfile  # noqa: E402
from pagedattn.workloads import UnifiedShape  # noqa: E402

for form in (LaunchProfile(64, 128, 1, 8, 2, keys_as_rows=True), LaunchProfile(32, 64, 1, 4, 2, keys_as_rows=True)):
    kw = UnifiedShape((4, 1, 2), (700, 90, 33), 16, 1, 256, 16, kv_dtype="fp8").build("cuda", seed=61).kwargs
    poison_past_lengths(kw)
    expected = reference.unified_attention(**kw)
    for name, mod in (("zeroed", ukr_tma), ("not zeroed", ukr_tma_nofix)):
        out = torch.full_like(kw["q"], float("nan"))
        mod.launch_unified_keys_rows(kw["q"], kw["k_cache"], kw["v_cache"], out, kw["cu_seqlens_q"], kw["seq_lens"],
                                     kw["block_table"], max_seqlen_q=kw["max_seqlen_q"],
                                     softmax_scale=kw["q"].shape[-1] ** -0.5, k_scale=kw["k_scale"],
                                     v_scale=kw["v_scale"], profile=dataclasses.replace(form, num_splits=3))
        torch.cuda.synchronize()
        print(json.dumps({"form": form.short(), "copy": name, "nan": bool(out.isnan().any()),
                          "rel_l2": reference.rel_l2(out.nan_to_num(), expected)}), flush=True)
