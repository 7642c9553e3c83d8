"""v42: build/v42/ukr_dsplit.py (make_dsplit.py: the keys-as-rows kernel with O^T's head dimensions split across two
programs, one warpgroup and 64 keys per step each, two programs per SM) against the dispatcher's two-warpgroup form
at the same split count, on wg1_ab.py's cases and timing (`time_against_base`).
Usage: dsplit_ab.py OUT.jsonl"""
import dataclasses
import sys

sys.path.insert(0, "scripts")
import ukr_dsplit  # noqa: E402
from wg1_ab import time_against_base  # noqa: E402

if __name__ == "__main__":
    time_against_base(sys.argv[1], "dsplit", ukr_dsplit.launch_unified_keys_rows,
                      lambda base: dataclasses.replace(base, tile_n=64, num_warps=4))
