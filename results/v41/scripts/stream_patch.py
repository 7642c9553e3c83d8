"""v41: a pytest plugin (`-p stream_patch`, build/v41 and this folder on PYTHONPATH) that makes the API call
build/v41's streaming-merge probes of both Gluon unified kernels (make_variants.py) instead of the library's
launchers, so the GPU tests of those kernels run them (graph replays with new lengths and tables included)."""
import pagedattn.api
import ukr_stream
import vw_stream


def pytest_configure(config):
    pagedattn.api.launch_verify_wgmma = vw_stream.launch_verify_wgmma
    pagedattn.api.launch_unified_keys_rows = ukr_stream.launch_unified_keys_rows
