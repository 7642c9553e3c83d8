#!/usr/bin/env bash
# v52 call 1 (not run in v52: no machine started), from branch wip/packed-q-terms = main with results/v52/packed-q-terms.patch
# applied (v51's kernel change rebuilt offline, as v51's branch did not survive into v52, and the ring prologue shared)
# with build/v51 carried (results/v51/scripts/make_variants.py run on the branch: ukr_base is main's
# kernel, ukr_packed packs at every block_m, which at 16 rows is the branch's build). On an H200 only (elsewhere it stops
# after writing the GPU's name): v51's packed_ab.py at the FP8 long request q=1 (16 rows, the one case the change
# moves), then `land_unified` (scripts/call-prologue.sh: re-tune, bench, GPU tests, memcheck) in LIMIT seconds
# (default 480). Bring back NVIDIA_H200.json (to pagedattn/profiles/tables) and retune.tgz (to docs/profiles-h200.md).
. scripts/call-prologue.sh v52 c1
export PYTHONPATH=$PYTHONPATH:$PWD/build/v51
if ! grep -q H200 $o/times.txt; then cat $o/times.txt; exit 0; fi
step ab 90 python3 results/v51/scripts/packed_ab.py $o/ab.jsonl "B=1 q=1 kv=131072 16q/1kv d256 fp8" > $o/ab.log 2>&1
grep -i "error\|Traceback" -A5 $o/ab.log | head -20; python3 results/v38/scripts/summary.py $o/ab.jsonl ukr_base
LIMIT=${LIMIT:-480} land_unified
