"""v34: a pytest plugin (`-p late_v_patch`, build/v34 and this folder on PYTHONPATH) that makes the API call
build/v34/ukr_late_v.py's launcher instead of the library's, with extra_k from $EXTRA_K (default 0), so the
keys-as-rows kernel's GPU tests run the late V wait."""
import functools
import os

import pagedattn.api
import ukr_late_v


def pytest_configure(config):
    pagedattn.api.launch_unified_keys_rows = functools.partial(ukr_late_v.launch_unified_keys_rows,
                                                               extra_k=int(os.environ.get("EXTRA_K", "0")))
