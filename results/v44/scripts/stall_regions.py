"""v44: ncu --page source --print-source sass CSV (SourceCounters) of a kernel with one KV loop -> warp stall samples
in the prologue (before the loop), the loop (its longest backward branch) and the epilogue, each by reason, and the
loop's samples by SASS opcode with their leading reasons.
Usage: stall_regions.py SOURCE.csv [OPCODES]"""
import collections
import csv
import re
import sys

rows = list(csv.reader(open(sys.argv[1])))
start = next(k for k, r in enumerate(rows) if r and r[0] == "Address")
hdr, data = rows[start], rows[start + 1:]
col = {h: k for k, h in enumerate(hdr)}
reasons = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
lines = []
for r in data:
    if len(r) < len(hdr):
        continue
    stalls = {h[6:]: int(r[col[h]].replace(",", "") or 0) for h in reasons}
    lines.append((int(r[col["Address"]], 16), r[col["Source"]].strip(), stalls))
branches = [(a, int(m.group(1), 16)) for a, sass, _ in lines if (m := re.search(r"BRA (0x[0-9a-f]+)", sass))]
loop_lo, loop_hi = max(((t, a) for a, t in branches if t < a), key=lambda r: r[1] - r[0])
regions = collections.defaultdict(collections.Counter)
ops = collections.defaultdict(collections.Counter)
for a, sass, stalls in lines:
    region = "prologue" if a < loop_lo else "loop" if a <= loop_hi else "epilogue"
    regions[region].update(stalls)
    if region == "loop":
        ops[re.sub(r"^@!?U?P\w+\s+", "", sass).split()[0].split(".")[0]].update(stalls)
total = sum(sum(c.values()) for c in regions.values())
for region in ("prologue", "loop", "epilogue"):
    c = regions[region]
    n = sum(c.values())
    print(f"{region:9s} {n:5d} ({n / total:.0%})", {k: v for k, v in c.most_common(8) if v})
for op, c in sorted(ops.items(), key=lambda x: -sum(x[1].values()))[:int(sys.argv[2]) if len(sys.argv) > 2 else 12]:
    print(f"  {op:10s} {sum(c.values()):5d}", {k: v for k, v in c.most_common(3) if v})
