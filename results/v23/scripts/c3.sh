#!/usr/bin/env bash
# v23 call 3: the GPU suite on the final tree; host time per eager call (remembered selection and
# the launcher called directly); the no-table A/B again on the final register estimate
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
o=$OUT/c3; mkdir -p $o
timeout 330 python3 -m pytest -q -p no:cacheprovider -n 8 > $o/tests.log 2>&1
echo "rc $?" >> $o/tests.log
tail -4 $o/tests.log
timeout 60 python3 build/v23/dispatch_time.py $o/dispatch.json > $o/dispatch.log 2>&1
echo "rc $?" >> $o/dispatch.log
cut -c1-220 $o/dispatch.log | head -6
timeout 150 python3 build/v23/notable_ab.py $o/notable.jsonl > $o/notable.log 2>&1
echo "rc $?" >> $o/notable.log
python3 - $o/notable.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    ms = " ".join(f"{n} {v*1e3:.1f}" for n, v in r["ms"].items())
    print(f"{r['no_table']:7s} {r['case']:42s} {r['profiles']['old']:28s} -> {r['profiles']['new']:28s} us: {ms}  new/old {r['new_over_old']:.3f} rel {max(r['rel_l2'].values()):.1e} nan {r['nan']}")
PY
tail -1 $o/notable.log
