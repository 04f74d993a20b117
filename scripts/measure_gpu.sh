#!/usr/bin/env bash
# Everything the committed results come from, in one go on a GPU machine: the GPU check (build, every
# test, compute-sanitizer, the table), the sweep, the profiler counters and perf/variants.cu's sets
# of rows. Writes into OUT exactly the files results/<gpu>/progression/ holds (each data file with its
# provenance: table.json's meta, sweep_meta.json, profile.meta.json, variants.meta.json), and only when every
# part produced its file: a failed or empty part fails the run and OUT is left as it was (what was
# made is kept in a temporary folder, named at the end); the files are copied in beside their
# targets first and renamed over them only when all are copied. Then run scripts/update_readme.
#
#   scripts/measure_gpu.sh OUT [build-dir]        default build dir: build/gpu
#   env: CUDAARCHS, JOBS as for check_gpu.sh; REDUCE_COMMIT names the commit where .git is absent;
#        PERF_SETS   the sets of perf_variants to run, separated by ; (default below)
#        PARTS       which parts to run, of: check sweep profile variants (default all four); a
#                    device call that allows less time than all four need can run them in two calls
#   exit codes: 0 all parts done; 1 a part failed; 2 bad usage; 77 no usable GPU
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: scripts/measure_gpu.sh OUT [build-dir]"
die() { echo "measure_gpu: $2" >&2; exit "$1"; }
case "${1:-}" in
  -h|--help) echo "$usage"; exit 0 ;;
  "") die 2 "no OUT folder given ($usage)" ;;
  -*) die 2 "unknown option '$1' ($usage)" ;;
esac
[ $# -le 2 ] || die 2 "too many arguments ($usage)"
out=$1
build=${2:-$root/build/gpu}
# Whether a folder exists or can be made (its nearest existing ancestor is a writable folder), checked
# before anything runs so that a bad OUT costs no GPU time and leaves no half-made files.
creatable() {
  local p=$1
  while [ ! -e "$p" ]; do p=$(dirname "$p"); done
  [ -d "$p" ] && [ -w "$p" ]
}
[ ! -e "$out" ] || [ -d "$out" ] || die 2 "OUT $out is not a folder"
creatable "$out" || die 2 "OUT $out cannot be created"
[ ! -e "$build" ] || [ -d "$build" ] || die 2 "the build folder $build is not a folder"
creatable "$build" || die 2 "the build folder $build cannot be created"
perf_sets=${PERF_SETS:-"atomics;latency;tiles"}
parts=" ${PARTS-check sweep profile variants} "
for p in $parts; do
  case $p in check|sweep|profile|variants) ;; *) die 2 "PARTS: unknown part '$p' (check sweep profile variants)" ;; esac
done
[ -n "${parts// /}" ] || die 2 "PARTS is empty: name one or more of check sweep profile variants"
want() { [[ $parts == *" $1 "* ]]; }
work=$(mktemp -d)
new="$work/new"
mkdir -p "$new" "$work/logs"
failed=()

# Runs one part: part NAME FILE... -- COMMAND...; the part fails unless it exits 0 and every FILE
# (relative to $new) exists and is not empty.
part() {
  local name=$1 files=() f
  shift
  while [ "$1" != "--" ]; do files+=("$1"); shift; done
  shift
  echo "measure_gpu: $name ..." >&2
  "$@"
  local rc=$?
  [ "$rc" -eq 77 ] && die 77 "$name: no usable GPU (see $work/logs)"
  for f in "${files[@]}"; do [ -s "$new/$f" ] || { failed+=("$name (no $f)"); return; }; done
  [ "$rc" -eq 0 ] || failed+=("$name (exit $rc)")
}

# 1. The GPU check; its summary is the last lines of its output, its table.json in its logs.
check() {
  LOG_DIR="$work/logs" "$root/scripts/check_gpu.sh" "$build" >"$work/check_gpu.txt" 2>&1
  local rc=$?
  # the summary without the machine's folder names (it is committed): paths made relative
  sed -n '/^=== check_gpu summary/,$p' "$work/check_gpu.txt" | sed -e "s#$work/##g" -e "s#$root/##g" >"$new/gpu_check.txt"
  cp "$work/logs/table.json" "$new/" 2>/dev/null
  return $rc
}
want check && part "GPU check" gpu_check.txt table.json -- check

# 2. Every step over n = 2^10 .. 2^30 (and the read ceiling at each n).
sweep() {
  "$root/scripts/run_all" --no-build --build-dir "$build" --out "$work/sweep" --sweep >"$work/logs/sweep.log" 2>&1
  local rc=$?
  cp "$work/sweep/sweep.csv" "$work/sweep/sweep_meta.json" "$new/" 2>/dev/null
  cp "$work/sweep/sweep.png" "$new/" 2>/dev/null
  return $rc
}
want sweep && part "sweep" sweep.csv sweep_meta.json -- sweep

# 3. Profiler counters of every step's first reduction kernel.
want profile && part "profile" profile.csv profile.meta.json -- env LOG_DIR="$work/logs" "$root/scripts/profile_steps.sh" -o "$new/profile.csv" "$build"

# 4. The experiments behind PERF_NOTES.md, with their provenance (variants.meta.json: the device and
#    CUDA versions as the first step of the same build reports them).
variants() {
  local first
  first=$(python3 "$root/scripts/suite.py" steps | head -n 1) || return 1
  cmake -S "$root" -B "$build" -DREDUCE_BUILD_PERF=ON >>"$work/logs/configure.log" 2>&1 &&
    cmake --build "$build" --target perf_variants "$first" --parallel "${JOBS:-$(nproc)}" >>"$work/logs/build.log" 2>&1 ||
    return 1
  python3 "$root/scripts/suite.py" provenance "$build/bin/$first" "$new/variants.meta.json" \
    --by "perf/variants.cu (scripts/measure_gpu.sh)" 2>>"$work/logs/variants.err" || return 1
  local rc=0 set
  IFS=';' read -ra sets <<<"$perf_sets"
  for set in "${sets[@]}"; do
    # shellcheck disable=SC2086  # "ends 24 28 30" is a set and its sizes
    "$build/bin/perf/perf_variants" $set >>"$new/variants.txt" 2>>"$work/logs/variants.err" || rc=1
    echo >>"$new/variants.txt"
  done
  return $rc
}
want variants && part "perf variants" variants.txt variants.meta.json -- variants

tar -czf "$new/logs.tar.gz" -C "$work" logs check_gpu.txt
cat "$new/gpu_check.txt" 2>/dev/null
if [ ${#failed[@]} -gt 0 ]; then
  echo "measure_gpu: FAIL: $(IFS=';'; echo "${failed[*]}"); nothing written to $out; what was made is in $new" >&2
  exit 1
fi
# All or nothing: every file copied in beside its target under a temporary name, then all renamed.
copied=()
mkdir -p "$out" 2>/dev/null || die 1 "cannot write into $out; what was made is in $new"
for f in "$new"/*; do
  tmp="$out/.$(basename "$f").tmp.$$"
  if ! cp "$f" "$tmp" 2>/dev/null; then
    rm -f "${copied[@]}" "$tmp"
    die 1 "cannot write into $out (nothing changed there); what was made is in $new"
  fi
  copied+=("$tmp")
done
for tmp in "${copied[@]}"; do
  name=$(basename "$tmp"); name=${name#.}; name=${name%.tmp.$$}
  mv -f "$tmp" "$out/$name" || die 1 "cannot rename $tmp in $out"
done
rm -rf "$work"
echo "measure_gpu: PASS; files in $out"
