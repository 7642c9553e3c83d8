"""v35 call 3: call 1's comparison (rows32_ab.py) where item 1's short rows do not reach, to see whether they
should: a mixed batch's short launch at a group of 8 (32q/4kv D=128: its key has 64 rows, which take the analytic
default m64/n64/w4/st3) beside the bench's four chunks, with 48 decodes + 16 verifies of 4, 64 decodes, or 24
verifies of 8; the first of those at head size 64 and a group of 4 (32q/8kv D=64: 32 rows, the default m32); and
verify of 8 queries at a group of 8 (64 rows, the default). BF16 and FP8 pages; 16-, 32- and 64-row forms.
Usage: rows_more_ab.py OUT.jsonl [--tiny]"""
import sys

from rows32_ab import CHUNKS, SHORT, TINY, main
from pagedattn.workloads import Case, UnifiedShape

FORMS = ("m16/n64/s1/w4/st3/ahead", "m16/n128/s1/w4/st3", "m32/n64/s1/w4/st3/ahead", "m32/n128/s1/w4/st3",
         "m64/n64/s1/w4/st3", "m64/n64/s1/w4/st3/ahead")


def mixed(label, hkv, head, kv_dtype):
    seqs = CHUNKS + SHORT[label]
    shape = UnifiedShape(tuple(n for n, _ in seqs), tuple(k for _, k in seqs), 32, hkv, head, kv_dtype=kv_dtype)
    return "short", Case(f"chunks + {label} 32q/{hkv}kv d{head} {kv_dtype}", shape)


def cases():
    if TINY:
        yield "short", Case("tiny mixed 16q/2kv", UnifiedShape((40, 1, 4, 8), (60, 50, 30, 90), 16, 2, 64, kv_dtype="fp8"))
        return
    for kv_dtype in ("bf16", "fp8"):
        for label in SHORT:
            yield mixed(label, 4, 128, kv_dtype)
        yield mixed("48 decodes + 16 verifies of 4", 8, 64, kv_dtype)
        yield "verify", Case(f"B=32 q=8 kv=8192 32q/4kv d128 {kv_dtype}",
                             UnifiedShape((8,) * 32, (8192,) * 32, 32, 4, 128, kv_dtype=kv_dtype))


if __name__ == "__main__":
    main(cases(), FORMS, sys.argv[1])
