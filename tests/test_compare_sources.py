"""scripts/compare_sources.py on a tiny case (interpreter on CPU): both trees run, same profiles, checked."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_compare_sources_times_both_trees_on_the_same_profiles(tmp_path):
    out = tmp_path / "ab.json"
    argv = [sys.executable, str(ROOT / "scripts" / "compare_sources.py"), "--old", str(ROOT), "--new", str(ROOT),
            "--tiny", "--case", "mtp-verify", "B=2 q=4 kv=37 16q/1kv d32 bf16",
            "--profile", "m64/n16/s2/w4/st2", "--profile", "m16/n32/s1/w4/st2/kvmajor", "--json", str(out)]
    done = subprocess.run(argv, env=os.environ | {"PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(out.read_text())
    assert [r["profile"] for r in rows] == ["m64/n16/s2/w4/st2/rowmajor", "m16/n32/s1/w4/st2/kvmajor"] * 2
    assert all(r["rel_l2"] < 1e-2 and r["ms"] > 0 for r in rows)
    assert "m16/n32/s1/w4/st2/kvmajor" in done.stdout.splitlines()[-1]
