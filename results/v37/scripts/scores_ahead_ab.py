"""v37 call 1: the unified keys-as-rows kernel's probes (build/v37, from make_variants.py) against the library's,
same profiles (the H200 table's), on the bench cases that run this kernel: the FP8 long request at q=1 and q=4 and
FP8 MTP verify (v34's `late_v_ab.keys_rows_ab`: NaN-prefilled outputs checked against float64, alternated graph
timing, min of 7 rounds). Probes: tile t's Q.K^T issued under tile t - 1's P.V (scores_ahead), also with a P.V
chunk's products left running while the next chunk's V is converted (scores_ahead_chunks), the library with a
tile's slots and page indices computed without t (addressing), and both (scores_ahead_chunks_addressing).
Usage: scores_ahead_ab.py OUT.jsonl"""
import importlib
import sys

sys.path.insert(0, "results/v34/scripts")
from late_v_ab import keys_rows_ab  # noqa: E402

PROBES = ("scores_ahead", "scores_ahead_chunks", "addressing", "scores_ahead_chunks_addressing")

if __name__ == "__main__":
    keys_rows_ab(sys.argv[1], {name: importlib.import_module("ukr_" + name).launch_unified_keys_rows
                               for name in PROBES})
