"""v44: the keys-as-rows kernel's time against the KV length, with and without its knock-outs (build/v44,
make_variants.py), so that a straight line through each form's times splits it into a cost per step (the slope, over
the steps a program runs) and a fixed cost (the prologue, the epilogue, the merge and the launches). Shapes: one
request, 16q/1kv, head size 256, FP8 pages, q = 1 and 4, at 65,536 / 98,304 / 131,072 / 196,608 / 262,144 keys, one input set
each (the 65,536-key K/V, 33.5 MB, stays in L2 between calls; the longer ones do not, or not whole). Every form runs
the dispatcher's profile for the shape (printed; a line is fitted only over lengths of one profile).
`ab_probe.check_and_time`: NaN-prefilled outputs against float64 (knock-outs' outputs are wrong: recorded, not
checked), alternated graph timing, min of 5 rounds.
Usage: sweep_ab.py OUT.jsonl FORM ...  (base is always timed)"""
import json
import sys
from types import SimpleNamespace

sys.path.insert(0, "scripts")
from ab_probe import check_and_time  # noqa: E402
from knock_ab import variants  # noqa: E402
from pagedattn import reference, workloads  # noqa: E402

LENGTHS = (65536, 98304, 131072, 196608, 262144)

if __name__ == "__main__":
    forms = [f for f in sys.argv[2:] if f != "base"]
    with open(sys.argv[1], "w") as f:
        for q in (4, 1):
            for keys in LENGTHS:
                shape = workloads.UnifiedShape((q,), (keys,), 16, 1, 256, kv_dtype="fp8")
                inputs = shape.build("cuda")
                row = {"case": f"B=1 q={q} kv={keys} 16q/1kv d256 fp8 (one set)", **check_and_time(
                    variants(SimpleNamespace(shape=shape), forms), [inputs],
                    reference.unified_attention(**inputs.kwargs), 5)}
                print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
                f.write(json.dumps(row) + "\n")
                del inputs
