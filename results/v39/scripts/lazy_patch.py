"""v39 call 1: a pytest plugin (`-p lazy_patch`, build/v39 and this folder on PYTHONPATH) that makes the API call
build/v39's vw_lazy.py (make_variants.py) instead of the library's warpgroup-MMA launcher, so the GPU tests run the
lazily rescaled kernel."""
import pagedattn.api
import vw_lazy


def pytest_configure(config):
    pagedattn.api.launch_verify_wgmma = vw_lazy.launch_verify_wgmma
