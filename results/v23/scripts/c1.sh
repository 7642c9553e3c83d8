#!/usr/bin/env bash
# v23 call 1: no-table profiles under the v23 register estimate against v22's; dispatch host time
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c1; mkdir -p $o
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > $o/smi.txt 2>&1
timeout 420 python3 build/v23/notable_ab.py $o/notable.jsonl > $o/notable.log 2>&1
echo "rc $?" >> $o/notable.log
timeout 90 python3 build/v23/dispatch_time.py $o/dispatch.json > $o/dispatch.log 2>&1
echo "rc $?" >> $o/dispatch.log
python3 - $o/notable.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    ms = " ".join(f"{n} {v*1e3:.1f}" for n, v in r["ms"].items())
    print(f"{r['no_table']:7s} {r['case']:42s} {r['profiles']['old']:30s} -> {r['profiles']['new']:30s} us: {ms}  new/old {r['new_over_old']:.3f} rel {max(r['rel_l2'].values()):.1e} nan {r['nan']}")
PY
tail -4 $o/notable.log | cut -c1-300
cat $o/dispatch.log
