#!/usr/bin/env bash
# v37 call 1: the keys-as-rows kernel's GPU tests through two of the probes (build/v37, make_variants.py; 2-stage
# profiles), then a same-profile A/B of all four against the library; needs build/v37 carried
. scripts/call-prologue.sh v37 c1
for probe in ukr_scores_ahead_chunks_addressing ukr_addressing; do
  step tests_$probe 120 env PROBE=$probe python3 -m pytest -q -n 8 -p no:cacheprovider -p scores_ahead_patch \
    tests/test_unified_keys_rows.py > $o/tests_$probe.log 2>&1
done
step ab 330 python3 results/v37/scripts/scores_ahead_ab.py $o/ab.jsonl > $o/ab.log 2>&1
cat $o/times.txt; tail -n 3 $o/tests_*.log; grep FAIL $o/ab.log | head -5
python3 -c "
import json
for l in open('$o/ab.jsonl'):
    r = json.loads(l); print(r['case'][:44], r['profile'], {k: round(v * 1e3, 2) for k, v in r['ms'].items()}, {k: round(v, 3) for k, v in r['ratio'].items()},
      'max rel-L2 %.1e' % max(e for e, _ in r['rel_l2_nan'].values()), 'nan' if any(n for _, n in r['rel_l2_nan'].values()) else '')"
