"""v42: build the probe kernel files under build/v42 (ignored; run this from the repository root before the A/B
script, and carry build/v42 to the device). Each is a form of ops/verify_wgmma.py (the warpgroup-MMA kernel that runs
BF16 MTP verify) with its relative imports made absolute:
  vw_base.py  commit BASE's kernel (v41's library): every score compared against its row's position, ANDed with its
              key's usable byte and the tile's segment test, then selected (`_softmax_pv`);
  vw_peel.py  branch wip/causal-peel's kernel (commit PEEL): a key's usable byte becomes a bias (0 or -inf) added
              in the score scale's FFMA, and the loop runs in two parts: the steps whose two tiles lie wholly before
              the block's first query take no causal compare (the Triton kernel's CAUSAL=False tiles,
              ops/unified.py), the rest do;
  vw_bias.py  vw_peel.py with the causal compare on every step (one loop): what the bias alone saves.
Usage: make_variants.py (from the repository root)"""
import sys
from pathlib import Path
sys.path.insert(0, "scripts")
from variant_source import absolute_imports, git_show, replaced  # noqa: E402

OUT = Path("build/v42")
BASE = "ac91ab5"  # v41's last commit
PEEL = "45f1b56"  # wip/causal-peel
KERNEL = "pagedattn/ops/verify_wgmma.py"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    peel = absolute_imports(git_show(f"{PEEL}:{KERNEL}"))
    (OUT / "vw_base.py").write_text(absolute_imports(git_show(f"{BASE}:{KERNEL}")))
    (OUT / "vw_peel.py").write_text(peel)
    (OUT / "vw_bias.py").write_text(replaced(peel, ("PAGES_AHEAD, causal == 1, COPY", "PAGES_AHEAD, True, COPY")))


if __name__ == "__main__":
    main()
