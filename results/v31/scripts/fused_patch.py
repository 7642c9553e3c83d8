"""v31: a pytest plugin (`-p fused_patch`, build/v31 and this folder on PYTHONPATH) that makes the API call
the launcher of build/v31's FUSED_MODULE (environment; default ukr_fused_v1, the file call 1 ran, then named
ukr_fused) instead of the library's, so the keys-as-rows kernel's GPU tests run the in-kernel merge."""
import importlib
import os

import pagedattn.api


def pytest_configure(config):
    module = importlib.import_module(os.environ.get("FUSED_MODULE", "ukr_fused_v1"))
    pagedattn.api.launch_unified_keys_rows = module.launch_unified_keys_rows
