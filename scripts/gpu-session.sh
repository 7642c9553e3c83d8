#!/usr/bin/env bash
# Device-time plan for a 2-GPU machine (nvidia-h200-x2), one phase per `device` call (each < 10 min):
#
#   tune     both GPUs: tensor-parallel serving (torchrun, 2 ranks, scripts/serve_transformers_tp.py);
#            then GPU 0: `pagedattn tune --kernel unified`; GPU 1: the GPU tests, the serving-shape
#            check (scripts/check_serving_shapes.py), then `pagedattn tune --kernel sparse`.
#            The tuners append to results/tune-<kernel>-h200.jsonl and are interrupted (SIGINT)
#            before the time box ends (an interrupted tuner writes the buckets it finished); the next
#            phase resumes from those files.
#   measure  the tuners again on both GPUs (resumed: only unmeasured candidates run), split by case,
#            then one cached pass per kernel writes pagedattn/profiles/tables/NVIDIA_H200.json and
#            its report.
#   bench    GPU 0: `pagedattn bench` over the unified workloads; GPU 1: over the sparse ones, then
#            the transformers serving benchmark (scripts/serve_transformers.py).
#   retune   one GPU (an `nvidia-h200` machine; on another GPU the table written is that GPU's), after
#            a change to kernel code (which makes every entry of that kernel's table stale, perf-notes
#            §6 item 7), or for a GPU without a table: `pagedattn tune` of each
#            kernel in KERNELS (default "sparse unified") with the passes and first guesses the last
#            re-tunes ran (perf-notes v24 calls 1-2, v25 call 3): sparse in one pass; unified in five
#            (MTP verify and the long requests with the Gluon kernels' first guesses; GQA decode,
#            verify and dense prefill at 4 candidates; the mixed batches at 8 from the split short
#            launches of perf-notes v33 item 1; the FP8 long request at q=4 from 128 and 132 splits;
#            the BF16 MTP 16q/1kv bucket at 32,768 keys alone from 5 stages with --min-gain 0.01). Each pass
#            starts every bucket at the table's previous profiles and measures into its own results
#            file (as those calls did: a pass does not reuse another's times); ~130 s (sparse) and
#            ~160 s (unified) on the H200 in v25 call 3. The GPU tests and the benches are the caller's.
#
# Usage: scripts/gpu-session.sh tune|measure|bench|retune OUTDIR [SECONDS]   (time box, default 540)
#        CANDIDATES=12 scripts/gpu-session.sh ...   caps the tuners' candidates per bucket (default 48):
#        a quick re-tune after a kernel change, each bucket starting at the previous table's profile.
# Everything goes to OUTDIR/session.tgz (the device tool returns few files) and the tail of each log
# to stdout. Works from a source checkout with nothing installed (PYTHONPATH).
set -uo pipefail
usage="usage: scripts/gpu-session.sh tune|measure|bench|retune OUTDIR [SECONDS]"
phase=${1:?$usage}
out=${2:?$usage}
budget=${3:-540}
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
start=$(date +%s)
logs=$(mktemp -d)
left() { echo $((budget - ($(date +%s) - start))); }
tune() {  # tune KERNEL GPU SECONDS [extra args]: resumable, interrupted after SECONDS
  local kernel=$1 gpu=$2 secs=$3
  shift 3
  CUDA_VISIBLE_DEVICES=$gpu timeout -s INT "$secs" python3 -m pagedattn.cli tune --kernel "$kernel" \
    --results "results/tune-$kernel-h200.jsonl" --jobs "${JOBS:-12}" --max-candidates "${CANDIDATES:-48}" --quiet "$@"
}
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)"
} >"$logs/env.txt" 2>&1

case $phase in
tune)
  timeout 150 torchrun --nproc-per-node 2 scripts/serve_transformers_tp.py \
    --layers 4 --requests 128 --max-new-tokens 32 --json "$logs/serve-tp.json" >"$logs/serve-tp.log" 2>&1
  echo "tp rc $?" >>"$logs/serve-tp.log"
  tune unified 0 "$(( $(left) - 20 ))" --table-dir "$logs/tables" >"$logs/tune-unified.log" 2>&1 &
  (
    CUDA_VISIBLE_DEVICES=1 timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 \
      tests/test_gpu.py tests/test_api.py tests/test_transformers_integration.py tests/test_bench.py \
      >"$logs/pytest-gpu.log" 2>&1
    echo "gpu tests rc $?" >>"$logs/pytest-gpu.log"
    CUDA_VISIBLE_DEVICES=1 timeout 90 python3 scripts/check_serving_shapes.py >"$logs/serving-shapes.log" 2>&1
    echo "serving shapes rc $?" >>"$logs/serving-shapes.log"
    tune sparse 1 "$(( $(left) - 20 ))" --table-dir "$logs/tables-sparse" >"$logs/tune-sparse.log" 2>&1
    echo "tune rc $?" >>"$logs/tune-sparse.log"
  ) &
  wait
  ;;
measure)
  (
    tune unified 0 "$(( $(left) - 100 ))" --workload mtp-verify --match 16q/1kv
    tune unified 0 "$(( $(left) - 100 ))" --workload gqa-decode gqa-verify long-request
  ) >"$logs/tune-unified.log" 2>&1 &
  (
    tune unified 1 "$(( $(left) - 100 ))" --workload mtp-verify --match 32q/2kv
    tune unified 1 "$(( $(left) - 100 ))" --workload mixed-batch dense-prefill
    tune sparse 1 "$(( $(left) - 100 ))"
  ) >"$logs/tune-unified-b.log" 2>&1 &
  wait
  # one pass per kernel over all buckets writes the table and report; where the tuners above did not
  # finish, it measures on until its time box and writes the buckets it finished
  for kernel in unified sparse; do
    tune "$kernel" 0 45 --report "$logs/profiles-$kernel.md" >"$logs/tune-$kernel-table.log" 2>&1
    echo "tune $kernel rc $?" >>"$logs/tune-$kernel-table.log"
  done
  cp pagedattn/profiles/tables/NVIDIA_H200.json "$logs/"
  ;;
bench)
  CUDA_VISIBLE_DEVICES=0 timeout "$(( $(left) - 5 ))" python3 -m pagedattn.cli bench --workload mtp-verify \
    gqa-decode gqa-verify long-request mixed-batch dense-prefill --providers pagedattn pagedattn-default torch-sdpa \
    --json "$logs/bench-unified.json" >"$logs/bench-unified.log" 2>&1 &
  (
    CUDA_VISIBLE_DEVICES=1 timeout "$(( $(left) - 100 ))" python3 -m pagedattn.cli bench --workload sparse-prefill \
      sparse-decode --providers pagedattn pagedattn-default torch-sdpa --json "$logs/bench-sparse.json" \
      >"$logs/bench-sparse.log" 2>&1
    CUDA_VISIBLE_DEVICES=1 timeout "$(( $(left) - 5 ))" python3 scripts/serve_transformers.py --layers 4 \
      --requests 128 --max-new-tokens 32 --json "$logs/serve.json" >"$logs/serve.log" 2>&1
  ) &
  wait
  ;;
retune)
  for kernel in ${KERNELS:-sparse unified}; do
    case $kernel in
    sparse)
      tune sparse 0 190 --max-candidates 8 --first-guess m16/n32/s1/w2/st2/exchange \
        --first-guess m16/n16/s1/w2/st2/exchange --first-guess m16/n64/s1/w4/st2/keysrows \
        --results "$logs/tune-sparse.jsonl" --report "$logs/profiles-sparse.md" >"$logs/tune-sparse.log" 2>&1
      ;;
    unified)
      tune unified 0 170 --workload mtp-verify long-request --max-candidates 8 \
        --first-guess m64/n128/s6/w8/st2/keysrows --first-guess m16/n128/s128/w8/st2/keysrows \
        --first-guess m16/n64/s256/w4/st2/keysrows --first-guess m64/n16/s13/w4/st5/ahead/wgmma \
        --first-guess m64/n16/s13/w4/st4/wgmma --results "$logs/tune-mtp.jsonl" --report "$logs/profiles-mtp.md" \
        >"$logs/tune-mtp.log" 2>&1
      tune unified 0 80 --workload gqa-verify gqa-decode dense-prefill --max-candidates 4 \
        --results "$logs/tune-rest.jsonl" --report "$logs/profiles-rest.md" >"$logs/tune-rest.log" 2>&1
      tune unified 0 80 --workload mixed-batch --max-candidates 8 --first-guess m16/n64/s8/w4/st3/ahead \
        --first-guess m16/n128/s6/w4/st3/ahead --first-guess m16/n64/s16/w4/st3/ahead \
        --results "$logs/tune-mixed.jsonl" --report "$logs/profiles-mixed.md" >"$logs/tune-mixed.log" 2>&1
      tune unified 0 60 --workload long-request --match "q=4 kv=131072 16q/1kv" --max-candidates 8 \
        --first-guess m64/n128/s128/w8/st2/keysrows --first-guess m64/n128/s132/w8/st2/keysrows \
        --results "$logs/tune-long-q4.jsonl" --report "$logs/profiles-long-q4.md" >"$logs/tune-long-q4.log" 2>&1
      tune unified 0 60 --workload mtp-verify --match "kv=32768 16q/1kv d256 bf16" --max-candidates 8 \
        --first-guess m64/n16/s13/w4/st5/ahead/wgmma --min-gain 0.01 --results "$logs/tune-bf16.jsonl" \
        --report "$logs/profiles-bf16.md" >"$logs/tune-bf16.log" 2>&1
      ;;
    *)
      echo "unknown kernel $kernel" >&2
      exit 2
      ;;
    esac
  done
  cp "pagedattn/profiles/tables/$(python3 -c 'from pagedattn.device import DeviceInfo; print(DeviceInfo.current().name)').json" \
    "$logs/"
  ;;
*)
  echo "unknown phase $phase" >&2
  exit 2
  ;;
esac
cp results/tune-*-h200.jsonl "$logs/" 2>/dev/null
for f in "$logs"/*.log "$logs"/*.json "$logs"/env.txt; do
  [ -f "$f" ] && { echo "== $(basename "$f")"; tail -25 "$f"; }
done
mkdir -p "$out"
tar czf "$out/session.tgz" -C "$logs" .
