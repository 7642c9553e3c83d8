"""v31: a pytest plugin (`-p fused_patch`, build/v31 and this folder on PYTHONPATH) that makes the API call
build/v31/ukr_fused.py's launcher instead of the library's, so the keys-as-rows kernel's GPU tests run the
in-kernel merge."""
import ukr_fused

import pagedattn.api


def pytest_configure(config):
    pagedattn.api.launch_unified_keys_rows = ukr_fused.launch_unified_keys_rows
