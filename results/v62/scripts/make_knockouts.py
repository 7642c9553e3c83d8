"""v62: build the keys-as-rows kernel's timing knock-outs on today's library source into build/v62 (ignored; run from
the repository root and carry build/v62), with v44's edits (results/v44/scripts/make_variants.py's KNOCKOUTS):
ukr_base (the library as it is), ukr_nocopy (no copies in the loop), ukr_noloop (no KV loop), ukr_nomerge (no split
merge), ukr_noloop_nomerge. Their outputs are wrong by construction; they time the parts of a q=4 call on the kernel
that runs it now (v50's item-6 prologue, v61's packed terms), which v44 item 7 timed on v38's.
Usage: make_knockouts.py"""
import sys
from pathlib import Path

sys.path.insert(0, "scripts")
sys.path.insert(0, "results/v44/scripts")
from make_variants import KERNEL, KNOCKOUTS  # noqa: E402
from variant_source import absolute_imports, replaced  # noqa: E402

OUT = Path("build/v62")
FORMS = ("nocopy", "noloop", "nomerge", "noloop_nomerge")

if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    base = absolute_imports(KERNEL.read_text())
    (OUT / "ukr_base.py").write_text(base)
    for name in FORMS:
        (OUT / f"ukr_{name}.py").write_text(replaced(base, *[e for part in name.split("_") for e in KNOCKOUTS[part]]))
