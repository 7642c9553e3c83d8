"""v37 call 5: a pytest plugin (`-p bounds_patch`, build/v37 and this folder on PYTHONPATH) that makes the API call
build/v37's bounds probes (ukr_bounds.py, vw_bounds.py; make_variants.py) instead of the library's two Gluon
unified launchers, so their GPU tests run the probe's tile bounds."""
import pagedattn.api
import ukr_bounds
import vw_bounds


def pytest_configure(config):
    pagedattn.api.launch_unified_keys_rows = ukr_bounds.launch_unified_keys_rows
    pagedattn.api.launch_verify_wgmma = vw_bounds.launch_verify_wgmma
