#!/usr/bin/env bash
# v57's landing call for branch wip/packed-q-terms (main with results/v52/packed-q-terms.patch applied) when the
# session's device budget no longer fits v52's c1.sh (A/B and a 48-candidate re-tune): on an H200 only (elsewhere it
# stops after writing the GPU's name), `land_unified` (scripts/call-prologue.sh) with the tuners' candidates per
# bucket capped at CANDIDATES (default 12) and every step inside LIMIT seconds (default 330).
. scripts/call-prologue.sh v57 c1
if ! grep -q H200 $o/times.txt; then cat $o/times.txt; exit 0; fi
CANDIDATES=${CANDIDATES:-12} LIMIT=${LIMIT:-330} land_unified
