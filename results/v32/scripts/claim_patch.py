"""v32: a pytest plugin (`-p claim_patch`, build/v32 and this folder on PYTHONPATH) that makes the API call
build/v32/ukr_claim.py's launcher instead of the library's, so the keys-as-rows kernel's GPU tests run the
claimed tiles."""
import pagedattn.api
import ukr_claim


def pytest_configure(config):
    pagedattn.api.launch_unified_keys_rows = ukr_claim.launch_unified_keys_rows
