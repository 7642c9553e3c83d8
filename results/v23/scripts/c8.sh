#!/usr/bin/env bash
# v23 call 8: BF16 decode at head size 256 over 64-512 keys: dispatched vs the other kernels
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c8; mkdir -p $o
timeout 120 python3 build/v23/decode_probe.py $o/decode.jsonl c8 > $o/decode.log 2>&1
echo "rc $?" >> $o/decode.log
python3 - $o/decode.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    d = r["ms"]["dispatched"]
    ms = " ".join(f"{n} {v*1e3:.1f}" for n, v in r["ms"].items())
    print(f"{r['case']:36s} {r['source']:7s} {ms} | best {r['best']} {r['ms'][r['best']]/d:.3f} rel {max(r['rel_l2'].values()):.1e} nan {r['nan']}")
PY
tail -1 $o/decode.log
