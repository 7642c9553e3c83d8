"""v34 call 2: the unified keys-as-rows kernel with each split's tiles dealt and its first page-table entries read
with the sequence's length (build/v34/ukr_dealt.py, from make_variants.py) against the library's, as late_v_ab.py
times call 1's probe.
Usage: dealt_ab.py OUT.jsonl"""
import sys

from late_v_ab import keys_rows_ab
import ukr_dealt

keys_rows_ab(sys.argv[1], {"dealt": ukr_dealt.launch_unified_keys_rows})
