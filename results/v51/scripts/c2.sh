#!/usr/bin/env bash
# v51 call 2, from branch wip/packed-q-terms after call 1: the kernel packs q's two e4m3 terms at 16 packed rows only
# (its 16-row builds are call 1's ukr_packed and its other builds v50's, SASS for SASS, offline), so only an H200
# runs on (elsewhere it stops after writing the GPU's name): `land_unified` (scripts/call-prologue.sh: the unified
# re-tune on it, the bench of MTP verify and the long requests, the GPU tests, memcheck) in LIMIT seconds (default
# 400; a cold re-tune took 217 s in v50 call 7). Bring back NVIDIA_H200.json (to pagedattn/profiles/tables) and
# retune.tgz (its reports to docs/profiles-h200.md).
. scripts/call-prologue.sh v51 c2
if ! grep -q H200 $o/times.txt; then cat $o/times.txt; exit 0; fi
LIMIT=${LIMIT:-400} land_unified
