"""v37: a pytest plugin (`-p scores_ahead_patch`, build/v37 and this folder on PYTHONPATH) that makes the API call
a probe's launcher (the module named by $PROBE, default ukr_scores_ahead; make_variants.py builds them) instead of
the library's for 2-stage profiles (the probes' rings have two slots; other stage counts keep the library's
launcher), so the keys-as-rows kernel's GPU tests run the probe."""
import importlib
import os

import pagedattn.api

library_launch = pagedattn.api.launch_unified_keys_rows
probe_launch = importlib.import_module(os.environ.get("PROBE", "ukr_scores_ahead")).launch_unified_keys_rows


def launch(*args, profile, **kwargs):
    (probe_launch if profile.num_stages == 2 else library_launch)(*args, profile=profile, **kwargs)


def pytest_configure(config):
    pagedattn.api.launch_unified_keys_rows = launch
