"""`pagedattn info | bench | check | tune` — the command line.

Each subcommand's options and behaviour live in its module (`bench.py`, `tune.py`); this file
only wires them together.
"""

from __future__ import annotations

import argparse
import json
import sys


def _info(args: argparse.Namespace) -> int:
    import torch
    import triton

    from .device import DeviceInfo
    from .interpreter import interpreter_active
    from .profiles import tables
    from .workloads import WORKLOADS

    dev = DeviceInfo.current()
    table = tables.table_path(dev.name)
    info = {
        "device": dev.__dict__,
        "interpreter": interpreter_active(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "tuned_table": str(table) if table.exists() else None,
        "kernel_hash": {k: tables.kernel_hash(k) for k in ("unified", "sparse")},
        "workloads": {name: w.description for name, w in WORKLOADS.items()},
    }
    json.dump(info, sys.stdout, indent=2)
    print()
    return 0


def main(argv: list[str] | None = None) -> int:
    from . import bench, tune

    parser = argparse.ArgumentParser(prog="pagedattn", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="device, versions, tuned table and workloads").set_defaults(func=_info)
    bench.add_arguments(sub.add_parser("bench", help="benchmark workloads x providers against measured ceilings"))
    bench.add_check_arguments(sub.add_parser("check", help="check workloads against the float64 reference"))
    tune.add_arguments(sub.add_parser("tune", help="measure launch profiles and write the device's table"))
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
