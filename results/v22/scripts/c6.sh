#!/usr/bin/env bash
# v22 call 6: the GPU suite on the final tree; the split merge's launch shapes alone
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c6; mkdir -p $o
nvidia-smi --query-gpu=name,memory.total --format=csv > $o/gpu.txt 2>&1
timeout 330 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/tests.log 2>&1
echo "rc $?" >> $o/tests.log
tail -4 $o/tests.log
timeout 200 python3 build/v22/merge_probe.py $o/merge.jsonl > $o/merge.log 2>&1
echo "rc $?" >> $o/merge.log
python3 - $o/merge.log <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
for r in rows:
    if "us" in r:
        print(f"{r['shape']:20s} v{r['values']:5d} w{r['warps']} c{r['min_columns']:2d} {r['us']:7.2f} us")
    else:
        print(r)
PY
tail -1 $o/merge.log
tar czf $OUT/c6.tgz -C $OUT c6
