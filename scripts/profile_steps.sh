#!/usr/bin/env bash
# Profiler counters behind the step READMEs' "what a profiler shows" sections: Nsight Compute on the
# first reduction kernel of every step of steps.txt (first pass, n = 2^24 floats by default), one CSV.
# The CSV comes out only when every step gave its counters (on stdout, or in FILE with -o); ncu's
# own messages are kept in LOG_DIR (default <build-dir>/logs), and a failure prints their last line.
# With -o FILE.csv its provenance goes beside it, FILE.meta.json (device, CUDA, date, commit: see
# scripts/suite.py), both renamed into place together.
#
#   scripts/profile_steps.sh [-o FILE] [build-dir] [n]      default build/release, 2^24
#   exit codes: 0 done; 1 ncu missing or failed, or a step gave no counters; 2 bad usage, no build
#   folder or a step not built; 77 no usable GPU
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: scripts/profile_steps.sh [-o FILE] [build-dir] [n]"
die() { echo "profile_steps: $2" >&2; exit "$1"; }

out="" args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) echo "$usage"; exit 0 ;;
    -o) [ $# -ge 2 ] || die 2 "-o needs a file ($usage)"; out=$2; shift 2 ;;
    -*) die 2 "unknown option '$1' ($usage)" ;;
    *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} -le 2 ] || die 2 "too many arguments ($usage)"
build=${args[0]:-$root/build/release}
n=${args[1]:-2^24}
[ -d "$build" ] || die 2 "no such build folder: $build"
[ -z "$out" ] || [ -d "$(dirname "$out")" ] || die 2 "-o $out: no such folder $(dirname "$out")"
[ -z "$out" ] || [ ! -d "$out" ] || die 2 "-o $out is a folder; give a file"
logs=${LOG_DIR:-$build/logs}
mkdir -p "$logs" 2>/dev/null || die 2 "cannot create the log folder $logs"
steps=$(python3 "$root/scripts/suite.py" steps) || exit 1
missing=()
for step in $steps; do [ -x "$build/bin/$step" ] || missing+=("$step"); done
[ ${#missing[@]} -eq 0 ] || die 2 "not built in $build/bin: ${missing[*]}"

# One run of the first step: refuses a bad n (2) and tells whether there is a GPU (77).
first=$(head -n 1 <<<"$steps")
err=$("$build/bin/$first" --n "$n" --iters 1 --warmup 0 --cpu-runs 0 --format json 2>&1 >/dev/null)
rc=$?
case $rc in
  0) ;;
  2) die 2 "$(tail -n 1 <<<"$err")" ;;
  77) die 77 "no usable GPU: $(tail -n 1 <<<"$err")" ;;
  *) die 1 "$first --n $n exited with $rc: $(tail -n 1 <<<"$err")" ;;
esac
command -v ncu >/dev/null || die 1 "ncu (Nsight Compute) is not on PATH"

metrics=(
  dram__throughput.avg.pct_of_peak_sustained_elapsed         # share of DRAM bandwidth used
  smsp__thread_inst_executed_per_inst_executed.ratio         # active threads per warp instruction (32 = none idle)
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum         # shared-memory bank conflicts
  smsp__inst_executed.sum                                    # warp instructions issued
  sm__warps_active.avg.pct_of_peak_sustained_active          # achieved occupancy
  gpu__time_duration.sum                                     # kernel time
)
joined=$(IFS=,; echo "${metrics[*]%% *}")
csv=$(mktemp)
trap 'rm -f "$csv"' EXIT
header=1
for step in $steps; do
  log="$logs/ncu_$step"
  # -k: the step's kernels (not the harness's L2 flush); -c 1: the first such launch.
  ncu --metrics "$joined" --csv -k 'regex:reduce_|DeviceReduce' -c 1 \
    "$build/bin/$step" --n "$n" --iters 1 --warmup 0 --cpu-runs 0 >"$log.out" 2>"$log.err"
  rc=$?
  rows=$(grep '^"' "$log.out")
  if [ $rc -ne 0 ] || [ "$(wc -l <<<"$rows")" -lt 2 ]; then
    why=$(cat "$log.err" "$log.out" | grep -E '==(ERROR|WARNING)==' | tail -n 1)
    [ -n "$why" ] || why=$(grep -v '^\s*$' "$log.err" | tail -n 1)
    die 1 "ncu gave no counters for $step (exit $rc): ${why:-no message}; log: $log.err"
  fi
  if [ $header -eq 1 ]; then echo "\"step\",$(head -n 1 <<<"$rows")" >>"$csv"; header=0; fi
  tail -n +2 <<<"$rows" | sed "s/^/\"$step\",/" >>"$csv"
done
if [ -n "$out" ]; then
  base=$(basename "$out") && stem=${base%.*} && meta="$(dirname "$out")/${stem:-$base}.meta.json"
  python3 "$root/scripts/suite.py" provenance "$build/bin/$first" "$meta.tmp.$$" --by scripts/profile_steps.sh ||
    { rm -f "$meta.tmp.$$"; die 1 "cannot write the provenance $meta"; }
  cp "$csv" "$out.tmp.$$" 2>/dev/null && mv -f "$out.tmp.$$" "$out" && mv -f "$meta.tmp.$$" "$meta" ||
    { rm -f "$out.tmp.$$" "$meta.tmp.$$"; die 1 "cannot write $out"; }
else
  cat "$csv"
fi
