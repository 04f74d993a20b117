#!/usr/bin/env bash
# The GPU check: on a machine with a CUDA GPU, build for that GPU, run every test with the GPU tests
# running, run compute-sanitizer's four tools over every step, print the speedup table, and end with
# one summary. Exits non-zero on any failure (a GPU test that skips counts as a failure here).
#
#   scripts/check_gpu.sh [build-dir]        default build/gpu; the steps are those of steps.txt
#   env: CUDAARCHS   architectures to build (default: native)
#        LOG_DIR     where the logs go (default: <build-dir>/logs)
#        JOBS        parallel build and test jobs (default: all cores)
#        SANITIZER_JOBS  compute-sanitizer runs at a time (default 1; each run is small, the GPU is shared)
#        CHECKS      which checks after the build, of: tests sanitizer table (default all three); a
#                    device call too short for all of them can run them in two calls
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: scripts/check_gpu.sh [build-dir]"
case "${1:-}" in
  -h|--help) echo "$usage"; exit 0 ;;
  -*) echo "check_gpu: unknown option '$1' ($usage)" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "check_gpu: too many arguments ($usage)" >&2; exit 2; }
checks=" ${CHECKS-tests sanitizer table} "
for c in $checks; do
  case $c in tests|sanitizer|table) ;; *) echo "check_gpu: CHECKS: unknown check '$c' (tests sanitizer table)" >&2; exit 2 ;; esac
done
[ -n "${checks// /}" ] || { echo "check_gpu: CHECKS is empty: name one or more of tests sanitizer table" >&2; exit 2; }
want() { [[ $checks == *" $1 "* ]]; }
san_jobs=${SANITIZER_JOBS:-1}
[[ $san_jobs =~ ^[1-9][0-9]*$ ]] || { echo "check_gpu: SANITIZER_JOBS '$san_jobs': expected a positive number" >&2; exit 2; }
steps=$(python3 "$root/scripts/suite.py" steps) || exit 1
build=${1:-$root/build/gpu}
logs=${LOG_DIR:-$build/logs}
jobs=${JOBS:-$(nproc)}
# The build and log folders must be folders, or creatable, before anything runs: one line, exit 2.
for folder in "$build" "$logs"; do
  mkdir -p "$folder" 2>/dev/null || { echo "check_gpu: cannot create the folder $folder" >&2; exit 2; }
done
status=0
summary=()
note() { summary+=("$1"); }
fail() { summary+=("FAIL: $1"); status=1; }

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "check_gpu: no GPU visible (nvidia-smi -L failed); this script needs one" >&2
  exit 77
fi
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)
note "GPU: $gpu; nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'); commit ${REDUCE_COMMIT:-$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"

# 1. Configure and build for this GPU.
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
start=$SECONDS
# REDUCE_GPU_TESTS=each: one CTest test per GPU test case, so that a failure or a skip names its case.
if cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DREDUCE_GPU_TESTS=each \
     -DCMAKE_CUDA_ARCHITECTURES="${CUDAARCHS:-native}" >"$logs/configure.log" 2>&1 &&
   cmake --build "$build" --parallel "$jobs" >"$logs/build.log" 2>&1; then
  note "build: ok ($((SECONDS - start)) s, architectures ${CUDAARCHS:-native})"
else
  tail -n 30 "$logs/build.log" "$logs/configure.log" 2>/dev/null
  fail "build (see $logs/build.log)"
  printf '%s\n' "${summary[@]}"
  exit 1
fi

# 2. Every test, GPU tests included. On a GPU machine nothing may be skipped but the tests that need
#    more GPUs than it has (their reason says "needs N GPUs").
if want tests; then
  start=$SECONDS
  ctest --test-dir "$build" --output-on-failure -j "$jobs" --output-junit "$logs/junit.xml" >"$logs/ctest.log" 2>&1
  ctest_rc=$?
  progress='^ *[0-9]+/[0-9]+ Test +#[0-9]+: '
  passed=$(grep -cE "$progress.* Passed" "$logs/ctest.log")
  skipped=$(grep -cE "$progress.*(Skipped|Not Run)" "$logs/ctest.log")
  failed=$(grep -E "$progress" "$logs/ctest.log" | grep -cvE ' Passed|Skipped|Not Run')
  total=$(sed -n 's/.*tests passed.* out of \([0-9]*\).*/\1/p' "$logs/ctest.log" | tail -n 1)
  note "tests: $passed passed, $skipped skipped, $failed failed of ${total:-?} ($((SECONDS - start)) s)"
  [ "$ctest_rc" -eq 0 ] || fail "ctest exited $ctest_rc: $(grep -E "$progress" "$logs/ctest.log" | grep -vE ' Passed|Skipped' | head -n 5 | tr -s ' .' | tr '\n' ';')"
  "$root/scripts/skip_reasons" "$logs/junit.xml" --allow 'needs [0-9]+ GPUs' >"$logs/skips.txt" 2>&1 ||
    fail "$skipped tests skipped on a GPU machine, not all for want of GPUs: $(tr -s ' ' <"$logs/skips.txt" | head -n 4 | tr '\n' ';')"
  [ "$skipped" -eq 0 ] || note "skipped, for want of GPUs: $(sed -n 2,3p "$logs/skips.txt" | tr -s ' ' | tr '\n' ';')"
fi

# 3. compute-sanitizer: four tools x every step of steps.txt x two sizes (one element; a non-power of
#    two with partial blocks and several passes). read_ceiling is not a step: it has no result to check.
#    SANITIZER_JOBS runs go at a time (default 1), each into its own log; sanitizer.log joins them in
#    the order of the runs, whatever order they finished in.
if want sanitizer; then
  start=$SECONDS
  san_dir="$logs/sanitizer_runs"
  rm -rf "$san_dir" && mkdir -p "$san_dir"
  san_runs=0
  san_bad=()
  # sanitize LABEL HEADER ENV... -- COMMAND...: one run in the background, at most san_jobs at a time
  sanitize() {
    local label=$1 header=$2 id
    shift 2
    while [ "$(jobs -rp | wc -l)" -ge "$san_jobs" ]; do wait -n; done
    san_runs=$((san_runs + 1))
    id=$(printf '%05d' "$san_runs")
    echo "$label" >"$san_dir/$id.label"
    ( echo "$header" >"$san_dir/$id.log"; "$@" >>"$san_dir/$id.log" 2>&1; echo $? >"$san_dir/$id.rc" ) &
  }
  for step in $steps; do
    exe="$build/bin/$step"
    [ -x "$exe" ] || { san_bad+=("$step(not built)"); continue; }
    for tool in memcheck racecheck synccheck initcheck; do
      for n in 1 100003; do
        extra=()
        [ "$tool" = memcheck ] && extra=(--leak-check full)
        sanitize "$tool/$step/n=$n" "=== $tool $step --n $n" compute-sanitizer --tool "$tool" "${extra[@]}" \
          --error-exitcode 99 "$exe" --n "$n" --iters 2 --warmup 1 --cpu-runs 0 --pattern int
      done
    done
  done
  # The steps beyond the progression list their runs in <step>/sanitize.args: one run per line,
  # "TOOLS | ARGUMENTS", TOOLS "all" or a comma-separated list (a multi-GPU run under NCCL: memcheck).
  for folder in "$root"/1[2-9]_*/; do
    step=$(basename "$folder")
    [ -f "$folder/sanitize.args" ] || continue
    exe="$build/bin/$step"
    [ -x "$exe" ] || { note "compute-sanitizer: $step not built here, left out"; continue; }
    while IFS='|' read -r tools args; do
      tools=$(echo "$tools" | tr -d ' ')
      case $tools in ""|\#*) continue ;; all) tools=memcheck,racecheck,synccheck,initcheck ;; esac
      for tool in ${tools//,/ }; do
        # --report-api-errors no: libraries (NCCL) probe kernels of other architectures and count the
        # refusal as an API error; memory and race errors still count.
        # shellcheck disable=SC2086  # args is a list of arguments
        sanitize "$tool/$step/$(echo $args | tr ' ' '_')" "=== $tool $step $args" env NCCL_NVLS_ENABLE=0 \
          compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 99 "$exe" $args
      done
    done <"$folder/sanitize.args"
  done
  wait
  : >"$logs/sanitizer.log"
  for label in "$san_dir"/*.label; do
    [ -e "$label" ] || continue
    id=${label%.label}
    cat "$id.log" >>"$logs/sanitizer.log" 2>/dev/null
    rc=$(cat "$id.rc" 2>/dev/null || echo none)
    [ "$rc" = 0 ] || san_bad+=("$(cat "$label")(rc=$rc)")
  done
  rm -rf "$san_dir"
  clean_errors=$(grep -c 'ERROR SUMMARY: 0 errors' "$logs/sanitizer.log")
  clean_races=$(grep -c 'RACECHECK SUMMARY: 0 hazards' "$logs/sanitizer.log")
  if [ ${#san_bad[@]} -eq 0 ]; then
    note "compute-sanitizer: memcheck, racecheck, synccheck, initcheck clean on every step and every run of <step>/sanitize.args ($san_runs runs, $((SECONDS - start)) s; log: $clean_errors 'ERROR SUMMARY: 0 errors', $clean_races 'RACECHECK SUMMARY: 0 hazards')"
  else
    fail "compute-sanitizer: ${san_bad[*]} (see $logs/sanitizer.log)"
  fi
fi

# 4. The speedup table at the default size.
if want table; then
  start=$SECONDS
  if "$root/scripts/run_all" --no-build --build-dir "$build" --out "$logs" >"$logs/run_all.log" 2>"$logs/run_all.err"; then
    note "speedup table: ok ($((SECONDS - start)) s)"
  else
    fail "run_all exited $? (see $logs/run_all.err)"
  fi
  cat "$logs/run_all.log"
fi

echo
echo "=== check_gpu summary"
printf '%s\n' "${summary[@]}"
[ "$status" -eq 0 ] && echo "check_gpu: PASS" || echo "check_gpu: FAIL"
exit "$status"
