"""v44: straight lines through sweep_ab.py's times: for each query count and form, time = fixed + steps x per-step,
fitted by least squares over the lengths past L2 (98,304 keys and up; 65,536 is listed apart), where every length runs
one profile (128 keys per step and 128 splits at q=4, 64 keys and 256 splits at q=1: 8 steps per program at 131,072
keys). Prints us.
Usage: fit_sweep.py SWEEP.jsonl ..."""
import json
import re
import sys
from collections import defaultdict

STEP_KEYS = {4: 128 * 128, 1: 64 * 256}  # keys per step x splits: keys / this = steps per program

times = defaultdict(dict)  # (q, form) -> {keys: us}
for path in sys.argv[1:]:
    for line in open(path):
        row = json.loads(line)
        q, keys = map(int, re.search(r"q=(\d+) kv=(\d+)", row["case"]).groups())
        for form, ms in row["ms"].items():
            times[q, form][keys] = ms * 1e3
for (q, form), by_keys in sorted(times.items()):
    pts = [(keys / STEP_KEYS[q], us) for keys, us in sorted(by_keys.items()) if keys > 65536]
    n = len(pts)
    mx = sum(x for x, _ in pts) / n
    my = sum(y for _, y in pts) / n
    slope = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    worst = max(abs(y - (my + slope * (x - mx))) for x, y in pts)
    print(f"q={q} {form:22s} per step {slope:5.2f}  fixed {my - slope * mx:5.2f}  (worst residual {worst:4.2f}; "
          f"65,536 keys {by_keys.get(65536, float('nan')):5.2f}; {', '.join(f'{y:.2f}' for _, y in pts)})")
