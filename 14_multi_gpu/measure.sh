#!/usr/bin/env bash
# Step 14 on one GPU machine, in one go: builds this step's targets in BUILD, prints the topology,
# runs this step's tests, then both modes (one process; one process per GPU under mpirun) at N = 1 ..
# every visible GPU: the sweep n = 2^16 .. 2^32 (strong scaling at 2^32, the crossover) and weak
# scaling at 2^30 floats per GPU; last, compute-sanitizer's memcheck on the one-GPU run. Writes into
# OUT: the JSON records (sweep.jsonl, weak.jsonl), meta.json, topo.txt, the tables (multi_gpu.md), the
# plot (scaling.png, where matplotlib is), the logs, and summary.txt, which it also prints.
#
#   14_multi_gpu/measure.sh BUILD OUT     BUILD: a configured tree (cmake -S . -B BUILD)
#   exit codes: 0 every part ran and every record passed; 1 a part failed (the rest still ran);
#               2 bad usage; 77 no GPU, or step 14 not built (no NCCL)
# Then: copy OUT into results/<machine>/ and run
#   14_multi_gpu/tables.py results/<machine> [...] --plot --readme 14_multi_gpu/README.md
set -uo pipefail
# NVLink multicast (NVLS) can put the shared GPUs of these machines out of service: off, always.
export NCCL_NVLS_ENABLE=0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage="usage: 14_multi_gpu/measure.sh BUILD OUT"
die() { echo "measure.sh: $2" >&2; exit "$1"; }
case "${1:-}" in
  -h|--help) echo "$usage"; exit 0 ;;
  -*) die 2 "unknown option '$1' ($usage)" ;;
esac
[ $# -eq 2 ] || die 2 "expected two arguments, BUILD and OUT ($usage)"
build=$(cd "$1" 2>/dev/null && pwd) || die 2 "BUILD folder $1 does not exist"
out=$2
[ -f "$build/CMakeCache.txt" ] || die 2 "$build is not a CMake build folder ($usage)"
bin=$build/bin/14_multi_gpu
mpibin=$build/bin/14_multi_gpu_mpi
mkdir -p "$out/logs" || die 2 "cannot create $out"
out=$(cd "$out" && pwd)
# This step's targets (nothing to do when the whole tree is built): the MPI one where configure made it,
# the tests where configure found GoogleTest.
targets=$(cmake --build "$build" --target help 2>/dev/null | sed -E 's/^[.]{3} //; s/[: ].*$//' |
  grep -xE '14_multi_gpu|14_multi_gpu_mpi|multi_gpu_tests|multi_gpu_cpu_tests' | sort -u | tr '\n' ' ')
if [ -z "$targets" ]; then
  die 77 "step 14 is not in $build: configure found no NCCL (see its '14_multi_gpu:' line)"
fi
# shellcheck disable=SC2086  # one word per target
cmake --build "$build" --parallel "$(nproc)" --target $targets >"$out/logs/build.log" 2>&1 ||
  die 1 "building $targets failed (see $out/logs/build.log)"
[ -x "$bin" ] || die 77 "$bin is not built (configure found no NCCL)"
command -v nvidia-smi >/dev/null || die 77 "no nvidia-smi: no NVIDIA driver here"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$gpus" -ge 1 ] || die 77 "nvidia-smi lists no GPU"
: >"$out/sweep.jsonl"
: >"$out/weak.jsonl"
failed=()
summary=()
note() { summary+=("$*"); echo "measure.sh: $*" >&2; }
started=$SECONDS

# 1. The machine: GPUs, links, versions.
nvidia-smi topo -m | tee "$out/topo.txt"
link=$(awk 'NR > 1 && $1 == "GPU0" { for (i = 2; i <= NF; i++) if ($i ~ /^NV[0-9]+$/) { print $i; exit } }' "$out/topo.txt")
commit=${REDUCE_COMMIT:-$(git -C "$here/.." rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}  # the device copy may carry a stale .git
printf '{"date": "%s", "commit": "%s", "gpus": %d, "link": "%s", "gpu": "%s"}\n' "$(date -u +%F)" "$commit" "$gpus" \
  "${link:-no NVLink between GPU0 and the others}" "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader -i 0)" \
  >"$out/meta.json"
note "$gpus GPU(s), link ${link:-none}, commit $commit"

# MPI launcher flags: Open MPI refuses root without these (containers), and binds each rank to one
# core unless told not to (each rank generates its shard on every core).
mpirun_cmd=()
if [ -x "$mpibin" ] && command -v mpirun >/dev/null; then
  if mpirun --version 2>&1 | grep -q "Open MPI"; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpirun_cmd=(mpirun --bind-to none -x NCCL_NVLS_ENABLE)
  else
    mpirun_cmd=(mpirun -genv NCCL_NVLS_ENABLE 0)
  fi
else
  failed+=("MPI mode (no ${mpibin##*/} or no mpirun: configure found no MPI)")
fi

# 2. This step's tests. The GPU tests (N = 1, 2, 4 where there are enough GPUs) run as one process,
# which makes each communicator once (ctest would start one process, and communicators, per test);
# ctest runs the rest: CPU, command line, smoke runs, the MPI runs.
t=$SECONDS
gpu_tests=$(find "$build" -name multi_gpu_tests -type f -perm -u+x | head -1)
if [ -n "$gpu_tests" ]; then
  timeout 180 "$gpu_tests" >"$out/logs/gpu_tests.log" 2>&1
  rc=$?
  note "GPU tests: $(grep -E '^\[ +(PASSED|SKIPPED|FAILED) +\] [0-9]+ tests?' "$out/logs/gpu_tests.log" | sed 's/^\[ *//; s/ *\] / /; s/, listed below:/ (fewer GPUs than they need, or none)/' | paste -sd ';' -) ($((SECONDS - t)) s)"
  [ "$rc" -eq 0 ] || failed+=("GPU tests (exit $rc, logs/gpu_tests.log)")
else
  failed+=("GPU tests (multi_gpu_tests not built)")
fi
t=$SECONDS
timeout 180 ctest --test-dir "$build" -R '14_multi_gpu|MultiGpu' -E '^gpu[.]' --output-on-failure >"$out/logs/tests.log" 2>&1
rc=$?
note "other tests: $(grep -E 'tests passed|tests failed' "$out/logs/tests.log" | tail -1), $(grep -c '\*\*\*Skipped' "$out/logs/tests.log") skipped ($((SECONDS - t)) s)"
[ "$rc" -eq 0 ] || failed+=("tests (see logs/tests.log)")

# 3. Both modes, N = 1 .. every GPU. One process per sweep holds one communicator for all its sizes;
# fewer iterations at the large sizes, where generating the input on the host takes the time.
run() {  # run MODE N FILE LOG ARGS...: one process (or mpirun), its JSON records appended to FILE
  local mode=$1 n=$2 file=$3 log=$4 rc
  shift 4
  if [ "$mode" = single ]; then
    timeout 200 "$bin" --gpus "$n" --format json "$@" >>"$file" 2>>"$out/logs/$log"
  else
    timeout 200 "${mpirun_cmd[@]}" -np "$n" "$mpibin" --format json "$@" >>"$file" 2>>"$out/logs/$log"
  fi
  rc=$?
  [ "$rc" -eq 0 ] || failed+=("$mode N=$n $* (exit $rc, logs/$log)")
}
modes=(single)
[ ${#mpirun_cmd[@]} -gt 0 ] && modes+=(mpi)
for mode in "${modes[@]}"; do
  for ((n = 1; n <= gpus; n++)); do
    t=$SECONDS
    run "$mode" "$n" "$out/sweep.jsonl" "${mode}_$n.log" --sweep 16:27 --iters 30 --warmup 3 --single-gpu
    run "$mode" "$n" "$out/sweep.jsonl" "${mode}_$n.log" --sweep 28:32 --iters 10 --warmup 2 --single-gpu
    run "$mode" "$n" "$out/weak.jsonl" "${mode}_$n.log" --n 2^30 --per-gpu --iters 10 --warmup 2 --single-gpu
    note "$mode, N = $n: $((SECONDS - t)) s"
  done
done
bad=$(grep -c '"passed": false' "$out/sweep.jsonl" "$out/weak.jsonl" | awk -F: '{ s += $2 } END { print s + 0 }')
[ "$bad" -eq 0 ] || failed+=("$bad record(s) with passed false")

# 4. Tables and plot.
if python3 "$here/tables.py" "$out" --plot --out "$out/multi_gpu.md" 2>"$out/logs/tables.log"; then
  cat "$out/multi_gpu.md"
else
  failed+=("tables ($(tail -1 "$out/logs/tables.log"))")
fi

# 5. compute-sanitizer memcheck on the one-GPU run, last: NCCL's start under the sanitizer may be slow,
# and the measurements come first.
t=$SECONDS
# compute-sanitizer from PATH, else beside the nvcc this build used.
nvcc_dir=$(dirname "$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")")
sanitizer=$(command -v compute-sanitizer || ls "$nvcc_dir/compute-sanitizer" 2>/dev/null)
if [ -n "$sanitizer" ]; then
  # --report-api-errors no: NCCL asks cudaFuncGetAttributes about its kernels for other architectures
  # and gets cudaErrorNoKernelImageForDevice, which memcheck would count; memory errors still count.
  timeout 150 "$sanitizer" --tool memcheck --report-api-errors no --error-exitcode 1 "$bin" --gpus 1 --n 1000003 --iters 2 --warmup 1 \
    --pattern int >"$out/logs/memcheck.log" 2>&1
  rc=$?
  note "memcheck, N = 1: exit $rc, $(grep -m1 'ERROR SUMMARY' "$out/logs/memcheck.log" || echo 'no summary') ($((SECONDS - t)) s)"
  [ "$rc" -eq 0 ] || failed+=("memcheck (see logs/memcheck.log)")
else
  failed+=("memcheck (no compute-sanitizer on PATH or in $nvcc_dir)")
fi

note "total $((SECONDS - started)) s"
{
  printf '%s\n' "${summary[@]}"
  if [ ${#failed[@]} -eq 0 ]; then echo "measure.sh: PASS"; else printf 'FAILED: %s\n' "${failed[@]}"; fi
} | tee "$out/summary.txt"
[ ${#failed[@]} -eq 0 ]
