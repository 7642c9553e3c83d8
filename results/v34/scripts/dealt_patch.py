"""v34: a pytest plugin (`-p dealt_patch`, build/v34 and this folder on PYTHONPATH) that makes the API call
build/v34/ukr_dealt.py's launcher instead of the library's, so the keys-as-rows kernel's GPU tests run the dealt
tiles."""
import pagedattn.api
import ukr_dealt


def pytest_configure(config):
    pagedattn.api.launch_unified_keys_rows = ukr_dealt.launch_unified_keys_rows
