"""Tuned launch tables: JSON data per device, written by `pagedattn tune`, read by the dispatcher.

File: `profiles/tables/<DEVICE_NAME>.json` (DEVICE_NAME as `DeviceInfo.name`, e.g. NVIDIA_H200):

    {"meta": {"device": ..., "triton": "3.6.0", "kernel_hash": {"unified": ..., "sparse": ...},
              "date": ..., "workloads": [...], "command": <the last tuning pass>},
     "entries": [{"key": <ShapeKey.bucket()>, "profile": <LaunchProfile>, "speedup": ..., ...,
                  "command": <the tuning pass that measured this entry>}],
     "previous": [<entries tuned for older kernel sources or Triton versions, same form>]}

A table is used only while its Triton version and the hash of the kernel's code (`kernel_hash`:
the source's tokens without comments and docstrings) match what is running; otherwise it is
ignored with a warning (a launch table measured for other code is a guess).
When the tuner rewrites a table, entries that no longer match move to "previous" instead of being
dropped: they are never dispatched, but they give the next tuning of their bucket its first guess
(`previous_profiles`), even when the buckets are re-tuned one workload at a time.
Lookup: entries of the same kernel, KV dtype, head size, GQA group and query class; among those the
nearest bucket by summed |log2| distance of sequence count, query length, token count, KV-head count and
KV length (the first of equally near entries wins). A profile that splits the KV range is then fitted
to the call's program count (`select.table_profile_for_call`).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import io
import json
import math
import tokenize
import warnings
from pathlib import Path

import triton

from .types import LaunchProfile, ShapeKey

TABLE_DIR = Path(__file__).parent / "tables"
_OPS_DIR = Path(__file__).resolve().parent.parent / "ops"
_KERNEL_SOURCES = {"unified": ("common.py", "gluon_common.py", "unified.py", "verify_wgmma.py", "unified_keys_rows.py"),
                   "sparse": ("common.py", "gluon_common.py", "sparse.py", "sparse_exchange.py", "sparse_keys_rows.py")}
_CATEGORICAL = ("kernel", "kv_dtype", "head_size", "group", "query_class")
_NUMERIC = ("num_seqs", "max_seqlen_q", "num_tokens", "num_kv_heads", "kv_len")
MAX_BUCKET_DISTANCE = 6.0  # beyond this (sum of log2 ratios) a tuned entry is not "near"
_REMEMBERED = []


def remembered_until_clear_cache(fn):
    """`fn` memoised (its arguments hashable) until `clear_cache`: for answers that depend on the
    table files, on `TABLE_DIR` or on the rule data, which only change between `clear_cache` calls."""
    cached = functools.lru_cache(maxsize=4096)(fn)
    _REMEMBERED.append(cached)
    return cached


@functools.lru_cache(maxsize=None)
def kernel_hash(kernel: str) -> str:
    """Hash of the kernel's code: the tokens of its source files without comments, blank lines and
    docstrings (`code_tokens`), so editing the prose beside a kernel keeps its tuned table. Tokens,
    not `ast.dump`: the dump differs between Python versions (3.11 here, 3.12 on the GPU machine)."""
    digest = hashlib.sha256()
    for name in _KERNEL_SOURCES[kernel]:
        digest.update(code_tokens((_OPS_DIR / name).read_text()).encode())
    return digest.hexdigest()[:16]


def code_tokens(source: str) -> str:
    """One line per token, `NAME text`, leaving out comments, blank lines and docstrings (the first
    string statement of a module, class or function)."""
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body and \
                isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and \
                isinstance(body[0].value.value, str):
            docstrings.add((body[0].lineno, body[0].col_offset))
    kept, in_docstring = [], False
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL):
            continue
        if tok.type == tokenize.STRING and tok.start in docstrings:
            in_docstring = True  # until the NEWLINE that ends the docstring statement
        elif not in_docstring:
            kept.append(f"{tokenize.tok_name[tok.type]} {tok.string.strip()}")
        elif tok.type == tokenize.NEWLINE:
            in_docstring = False
    return "\n".join(kept)


def table_path(device_name: str, directory: Path | None = None) -> Path:
    return (directory or TABLE_DIR) / f"{device_name}.json"


def bucket_distance(a: dict, b: dict) -> float:
    return sum(abs(math.log2(max(1, a[n]) / max(1, b[n]))) for n in _NUMERIC)


@remembered_until_clear_cache
def _load(path: str) -> dict | None:
    p = Path(path)
    if not p.exists():
        return None
    table = json.loads(p.read_text())
    meta = table.get("meta", {})
    if meta.get("triton") != triton.__version__:
        warnings.warn(f"ignoring tuned table {p.name}: tuned with Triton {meta.get('triton')}, running "
                      f"{triton.__version__}", stacklevel=3)
        return None
    hashes = meta.get("kernel_hash", {})
    tuned = sorted({e["key"]["kernel"] for e in table.get("entries", [])})
    stale = [k for k in tuned if hashes.get(k) != kernel_hash(k)]
    if stale:
        warnings.warn(f"ignoring {', '.join(stale)} entries of tuned table {p.name}: kernel source changed "
                      "since it was tuned, or the table records no source hash (run `pagedattn tune` again)",
                      stacklevel=3)
        table = dict(table, entries=[e for e in table["entries"] if e["key"]["kernel"] not in stale])
    return table


def lookup(key: ShapeKey, device_name: str, directory: Path | None = None) -> tuple[LaunchProfile, dict] | None:
    """(profile, entry) of the nearest tuned bucket for `key`, or None. Remembered per table file and
    key until `clear_cache`: the dispatcher asks on every call, and a scan of the entries took ~90 us."""
    return _nearest(str(table_path(device_name, directory)), key)


@remembered_until_clear_cache
def _nearest(path: str, key: ShapeKey) -> tuple[LaunchProfile, dict] | None:
    table = _load(path)
    if not table:
        return None
    want = key.bucket()
    best, best_d = None, MAX_BUCKET_DISTANCE
    for entry in table["entries"]:
        have = entry["key"]
        if any(have[c] != want[c] for c in _CATEGORICAL):
            continue
        d = bucket_distance(have, want)
        if d < best_d or (best is None and d == best_d):
            best, best_d = entry, d
    if best is None:
        return None
    return LaunchProfile.from_dict(best["profile"]), best


def previous_profiles(key: ShapeKey, device_name: str, directory: Path | None = None) -> list[LaunchProfile]:
    """The profiles the table file holds for exactly this bucket, current or "previous" (tuned for
    older kernel sources or Triton versions): starting points for the tuner after a kernel change,
    never used to dispatch (that is `lookup`'s job, which ignores stale entries)."""
    path = table_path(device_name, directory)
    if not path.exists():
        return []
    table, want = json.loads(path.read_text()), key.bucket()
    found = [LaunchProfile.from_dict(e["profile"]) for part in ("entries", "previous")
             for e in table.get(part, []) if e["key"] == want]
    return list(dict.fromkeys(found))


def clear_cache() -> None:
    """Forget every remembered table lookup and selection: after writing a table, pointing
    `TABLE_DIR` elsewhere or changing the rules or blocklist (`profiles.rules`)."""
    for cached in _REMEMBERED:
        cached.cache_clear()
