#!/usr/bin/env bash
# v23 call 6: the GPU suite with the v23 decode rules; the new rules' choices timed on call 4's and 5's
# decode shapes; single-sequence FP8 decode split counts on the one-warpgroup keys-as-rows form
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c6; mkdir -p $o
timeout 330 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/tests.log 2>&1
echo "rc $?" >> $o/tests.log
tail -3 $o/tests.log
timeout 60 python3 build/v23/split_probe.py $o/splits.jsonl > $o/splits.log 2>&1
echo "rc $?" >> $o/splits.log
python3 - $o/splits.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(f"{r['case']:34s} {r['rules']:36s} " + " ".join(f"{n} {v*1e3:.1f}" for n, v in r["ms"].items()) + f" rel {max(r['rel_l2'].values()):.1e}")
PY
tail -1 $o/splits.log
for plan in c4 c5; do
  timeout 120 python3 build/v23/decode_probe.py $o/decode-$plan.jsonl $plan > $o/decode-$plan.log 2>&1
  echo "rc $?" >> $o/decode-$plan.log
done
python3 - $o/decode-c4.jsonl $o/decode-c5.jsonl <<'PY'
import json, sys
for path in sys.argv[1:]:
    for l in open(path):
        r = json.loads(l)
        d = r["ms"]["dispatched"]
        print(f"{r['case']:36s} {r['profiles']['dispatched']:38s} {d*1e3:6.1f} us best {r['best']} {r['ms'][r['best']]/d:.3f} nan {r['nan']}")
PY
