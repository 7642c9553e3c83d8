"""Print stream_ab.py's results one case a line: min us per variant, stream and nomerge against base, the checks.
Usage: summary.py AB.jsonl"""
import json
import sys

for line in open(sys.argv[1]):
    row = json.loads(line)
    ms = row["ms"]
    checks = row["checks"]
    flat = [checks[name] for name in ("base", "stream", "stream_wait", "stream_after")] + checks["stream_graph"]
    print(row["case"][:40], row["profile"], {k: round(v * 1e3, 2) for k, v in ms.items()},
          " ".join("%s %.3fx" % (k, v / ms["base"]) for k, v in ms.items() if k != "base"),
          "max rel-L2 %.1e" % max(c[0] for c in flat), "NAN" if any(c[1] for c in flat) else "", "sync", row["sync"])
