"""scripts/keys_rows_decode_probe.py on a tiny case (interpreter on CPU): a sparse call whose one row selects
every key of its sequence computes the unified decode call's attention, the equivalence the probe's timing
comparison rests on."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(torch.cuda.is_available(),
                    reason="--tiny runs CPU tensors under Triton's interpreter, a CPU-machine path (the GPU machine's "
                           "numpy is too new for it); on a GPU the probe itself runs (perf-notes v16 item 6)")
def test_probe_sparse_call_over_every_key_matches_the_unified_reference(tmp_path):
    out = tmp_path / "probe.jsonl"
    argv = [sys.executable, str(ROOT / "scripts" / "keys_rows_decode_probe.py"), str(out), "--tiny"]
    done = subprocess.run(argv, env=os.environ | {"PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["kernel"] for r in rows] == ["unified (table)", "sparse m16/n16/s2/w4/st2"]
    assert all(r["rel_l2"] < 1e-2 and r["ms"] > 0 for r in rows)
