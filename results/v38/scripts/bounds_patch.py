"""v38 call 1: a pytest plugin (`-p bounds_patch`, build/v38 and this folder on PYTHONPATH) that makes the API call
build/v38's probes ukr_one_top.py and vw_one.py (make_variants.py) instead of the library's two Gluon unified
launchers, so the GPU tests run the one-compare bounds and the keys-as-rows loop's early page-table read."""
import pagedattn.api
import ukr_one_top
import vw_one


def pytest_configure(config):
    pagedattn.api.launch_unified_keys_rows = ukr_one_top.launch_unified_keys_rows
    pagedattn.api.launch_verify_wgmma = vw_one.launch_verify_wgmma
