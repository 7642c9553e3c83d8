"""scripts/check_serving_shapes.py: the continuous-batching shapes of the serving benchmarks
(page 256, head size 256, 32q/2kv and its 2-way TP share 16q/1kv) against the float64 reference,
with the profiles the H200 table would choose (small prompts, so it runs under the interpreter; the Gluon
kernels' profiles are named, not run)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_serving_shapes_match_the_reference_with_the_h200_profiles():
    command = [sys.executable, str(ROOT / "scripts" / "check_serving_shapes.py"), "--small", "--as-device", "NVIDIA_H200"]
    run = subprocess.run(command, env=os.environ | {"PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    checked = [line for line in run.stdout.splitlines() if "rel-L2" in line and not line.startswith("worst")]
    gluon = [line for line in run.stdout.splitlines() if "not run here" in line]
    # decode (both layouts) takes the H200 rules' warpgroup-MMA profile: run on an sm90 GPU, named under the interpreter
    assert (len(checked), len(gluon)) in ((6, 0), (4, 2)) and all("decode" in line for line in gluon), run.stdout
