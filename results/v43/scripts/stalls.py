"""v43: ncu --page source --print-source sass CSV (SourceCounters) -> stall samples per region of the ws kernel (the
register count in force after each USETMAXREG: 216 consumers, 72 producer, 256 the parent region) and the SASS
lines with the most samples, with their leading stall reasons. Usage: stalls.py SOURCE.csv [TOP]"""
import csv
import re
import sys

rows = list(csv.reader(open(sys.argv[1])))
start = next(k for k, r in enumerate(rows) if r and r[0] == "Address")
hdr, data = rows[start], rows[start + 1:]
col = {h: k for k, h in enumerate(hdr)}
reasons = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
region, by_region, lines = "entry", {}, []
for r in data:
    if len(r) < len(hdr):
        continue
    sass = r[col["Source"]].strip()
    m = re.search(r"USETMAXREG\.\w+\.CTAPOOL (?:UP0, )?(0x[0-9a-f]+)", sass)
    if m:
        region = int(m.group(1), 16)
    samples = int(r[col["Warp Stall Sampling (All Samples)"]].replace(",", "") or 0)
    stalls = {h[6:]: int(r[col[h]].replace(",", "") or 0) for h in reasons}
    agg = by_region.setdefault(region, {})
    for h, v in stalls.items():
        agg[h] = agg.get(h, 0) + v
    lines.append((samples, region, r[col["Address"]][-5:], sass, stalls))
for region, agg in by_region.items():
    total = sum(agg.values())
    if total:
        print(region, total, {h: v for h, v in sorted(agg.items(), key=lambda x: -x[1]) if v > 0.02 * total})
top_lines = int(sys.argv[2]) if len(sys.argv) > 2 else 30
for samples, region, addr, sass, stalls in sorted(lines, key=lambda x: -x[0])[:top_lines]:
    top = {h: v for h, v in sorted(stalls.items(), key=lambda x: -x[1])[:3] if v}
    print(samples, region, addr, sass[:60], top)
