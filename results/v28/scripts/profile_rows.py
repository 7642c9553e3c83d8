"""v28: the rows of docs/profiles-h200.md's two tables, rendered from a table file's entries in the order
the doc lists its cases, with each bucket's count of measured candidates from the re-tune's per-pass
results files (the pass that wrote the entry: its `command`). Usage: profile_rows.py TABLE.json DOC.md RESULTS_DIR"""
import glob, json, re, sys
from pagedattn.profiles.types import LaunchProfile

table, doc, results = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3]
measured = {}  # (command's workload filter, case) -> candidates measured
for path in glob.glob(f"{results}/tune-*.jsonl"):
    for line in open(path):
        row = json.loads(line)
        if row.get("status") in ("ok", "wrong") and "case" in row:
            measured.setdefault((path, row["case"]), set()).add(json.dumps(row["profile"], sort_keys=True))
entries = {e["case"]: e for e in table["entries"]}
for kernel in ("unified", "sparse"):
    section = doc.split(f"## {'Unified' if kernel == 'unified' else 'Sparse'} attention")[1].split("\n## ")[0]
    for case in re.findall(r"^\| ((?:B=|mixed|rows=)[^|]*?) \|", section, flags=re.M):
        e = entries[case]
        counts = [len(v) for (path, c), v in measured.items() if c == case]
        print(f"| {case} | `{LaunchProfile.from_dict(e['profile']).short()}` | {e['tuned_ms']:.4f} | "
              f"`{LaunchProfile.from_dict(e['default_profile']).short()}` | {e['default_ms']:.4f} | "
              f"{e['speedup']:.2f}x | {e['rel_l2']:.1e} | {max(counts) if counts else '?'} |")
    print()
