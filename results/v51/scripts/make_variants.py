"""v51: build the A/B's kernel files under build/v51 (ignored; run this from the repository root before the A/B script,
and carry build/v51 to the device). Each is a form of ops/unified_keys_rows.py (the kernel that runs FP8 MTP verify and
both FP8 long requests) with its relative imports made absolute:
  ukr_base.py     the kernel as v50 left it (4b0103b): Q.K^T as two FP8 products per step, one per e4m3 term of q, each
                  reading the step's K tile from shared memory (16 QGMMA at 8 k-steps each);
  ukr_packed.py   the kernel of branch wip/packed-q-terms with its PACK_TERMS set at every block_m (call 1 measured
                  this form, SASS for SASS): both terms side by side as the 2 x block_m columns of one
                  product, summed in registers after its wait (8 QGMMA).
The branch's kernel packs the terms at 16 packed rows only: its 16-row builds are ukr_packed's and its other builds
ukr_base's, SASS for SASS (offline, perf-notes v51 item 1). Run from that branch (or from main once it has landed).
Usage: make_variants.py (from the repository root)"""
import sys
from pathlib import Path

sys.path.insert(0, "scripts")
from variant_source import absolute_imports, git_show, replaced  # noqa: E402

OUT = Path("build/v51")
KERNEL = "pagedattn/ops/unified_keys_rows.py"

if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "ukr_base.py").write_text(absolute_imports(git_show(f"4b0103b:{KERNEL}")))
    (OUT / "ukr_packed.py").write_text(absolute_imports(replaced(
        Path(KERNEL).read_text(), ("PACK_TERMS: gl.constexpr = HN == 16", "PACK_TERMS: gl.constexpr = True"))))
    print(sorted(p.name for p in OUT.glob("*.py")))
