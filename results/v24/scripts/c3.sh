#!/usr/bin/env bash
# v24 call 3: split counts, v24's rule against v23's, on 21 calls where they differ (split_probe.py)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c3; mkdir -p $o
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $o/gpu.txt
timeout 400 python3 build/v24/split_probe.py $o/splits.jsonl > $o/splits.log 2>&1
echo "rc $?" >> $o/splits.log
python3 - $o/splits.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(f"{r['how']:7s} {r['case']:34s} {r['profiles']['old']:38s} -> {r['profiles']['new'].split('/')[2]:5s} "
          f"{r['ms']['old']*1e3:8.1f} {r['ms']['new']*1e3:8.1f} us  {r['new_over_old']:.3f}  rel {max(r['rel_l2'].values()):.1e} nan {r['nan']}")
PY
tail -1 $o/splits.log
