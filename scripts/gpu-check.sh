#!/usr/bin/env bash
# The GPU machine's one-call check: the whole test suite on CUDA (gpu-marked real-size tests
# included), compute-sanitizer memcheck over the bad-index tests, and the benchmark.
# Usage: scripts/gpu-check.sh OUTDIR [bench options...]
# Writes: OUTDIR/{env.txt,pytest.log,memcheck.log,bench.json,bench.log}. Works from a source
# checkout with nothing installed (PYTHONPATH), as on the H200 machine.
set -uo pipefail
out=${1:?usage: scripts/gpu-check.sh OUTDIR [bench options...]}
shift
mkdir -p "$out"
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)"
} >"$out/env.txt" 2>&1
status=0
python3 -m pytest -q -p no:cacheprovider tests >"$out/pytest.log" 2>&1 || status=1
tail -3 "$out/pytest.log"
compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider \
  tests/test_unified.py tests/test_sparse.py tests/test_verify_wgmma.py -k "invalid or every_page or padding or unknown_request" \
  >"$out/memcheck.log" 2>&1 || status=1
grep -E "ERROR SUMMARY|passed|failed" "$out/memcheck.log" | tail -2
python3 -m pagedattn.cli bench --json "$out/bench.json" "$@" >"$out/bench.log" 2>&1 || status=1
tail -40 "$out/bench.log"
exit $status
