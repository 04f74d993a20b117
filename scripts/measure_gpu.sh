#!/usr/bin/env bash
# Everything the committed results come from, in one go on a GPU machine: the GPU check (build, every
# test, compute-sanitizer, the table), the sweep, the profiler counters and perf/variants.cu's sets
# of rows. Writes into OUT exactly the files results/<gpu>/ holds; copy them there, then run
# scripts/plot_sweep.py and scripts/update_readme.
#
#   scripts/measure_gpu.sh OUT [build-dir]        default build dir: build/gpu
#   env: CUDAARCHS, JOBS as for check_gpu.sh; REDUCE_COMMIT names the commit where .git is absent
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: scripts/measure_gpu.sh OUT [build-dir]}
build=${2:-$root/build/gpu}
work=$(mktemp -d)
mkdir -p "$out"
status=0

# 1. The GPU check; its summary is the last lines of its output.
LOG_DIR="$work/logs" "$root/scripts/check_gpu.sh" "$build" >"$work/check_gpu.txt" 2>&1 || status=1
sed -n '/^=== check_gpu summary/,$p' "$work/check_gpu.txt" >"$out/check_gpu_summary.txt"
cp "$work/logs/table.json" "$out/" 2>/dev/null

# 2. Every step over n = 2^10 .. 2^30.
"$root/scripts/run_all" --no-build --build-dir "$build" --out "$work/sweep" --sweep >"$work/logs/sweep.log" 2>&1 || status=1
cp "$work/sweep/sweep.csv" "$work/sweep/sweep_meta.json" "$out/" 2>/dev/null

# 3. Profiler counters of every step's first reduction kernel.
"$root/scripts/profile_steps.sh" "$build" >"$out/profile.csv" 2>"$work/logs/profile.err" || status=1

# 4. The experiments behind PERF_NOTES.md.
if cmake -S "$root" -B "$build" -DREDUCE_BUILD_PERF=ON >>"$work/logs/configure.log" 2>&1 &&
   cmake --build "$build" --target perf_variants --parallel "${JOBS:-$(nproc)}" >>"$work/logs/build.log" 2>&1; then
  : >"$out/variants.txt"
  for set in loop finish flags claim "ends 24 28 30"; do
    # shellcheck disable=SC2086  # "ends 24 28 30" is a set and its sizes
    "$build/bin/perf/perf_variants" $set >>"$out/variants.txt" 2>&1 || status=1
    echo >>"$out/variants.txt"
  done
else
  status=1
fi

tar -czf "$out/logs.tar.gz" -C "$work" logs check_gpu.txt
cat "$out/check_gpu_summary.txt"
echo "measure_gpu: $([ $status -eq 0 ] && echo PASS || echo FAIL); files in $out"
exit $status
