#!/usr/bin/env bash
# v23 call 4: decode at head size 256 (8 and 64 sequences, 1,024-16,384 keys): dispatched vs the other kernels
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c4; mkdir -p $o
timeout 500 python3 build/v23/decode_probe.py $o/decode.jsonl > $o/decode.log 2>&1
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
