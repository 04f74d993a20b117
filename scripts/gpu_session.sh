#!/usr/bin/env bash
# One call on a GPU machine: builds the suite for sm_90 with Ninja, then runs the parts named in PARTS,
# each logged, and packs everything into OUT/results.tgz beside OUT/summary.txt (the device tool
# brings back at most 8 files, so the rest travels in the archive). A part that fails is named in
# the summary; the others still run.
#
#   PARTS="table sweep" scripts/gpu_session.sh OUT [build-dir]        default build dir: build/gpu
#   parts: table     scripts/run_all (the speedup table, read ceiling)      -> table/
#          sweep     scripts/run_all --sweep (n = 2^10 .. 2^30; SWEEP_RANGE=a:b only 2^a .. 2^b, a
#                    part that scripts/merge_sweep joins with the others)    -> sweep/
#          profile   scripts/profile_steps.sh (ncu counters)                 -> profile.csv, profile.meta.json
#          ablation  perf_variants ablation (step 09 against step 10)        -> ablation.txt, ablation.meta.json
#          variants  perf_variants' sets of PERF_SETS (default "atomics;latency;tiles", as measure_gpu.sh)
#                                                                            -> variants.txt, variants.meta.json
#          sass      scripts/sass_excerpt (main loops of 09 and 10)          -> sass/ (with meta.json)
#          tests     every test (ctest), GPU tests running; TESTS_REGEX narrows it -> tests.log, junit.xml
#          sanitizer scripts/check_gpu.sh's compute-sanitizer pass, SANITIZER_JOBS (default 4) runs at
#                    a time                                                  -> sanitizer.log
#          beyond    scripts/measure for every step of beyond.txt (BEYOND narrows it; on one GPU, 14's
#                    reproducible-mode lines only)                           -> <step>/
#          ncu_beyond scripts/profile_beyond for every step of beyond.txt with a profile.args (BEYOND
#                    narrows it)                                             -> <step>/profile/
#          bits      14_reproducible_bits --check 14_reproducible/reproducible_bits.txt -> bits/check.txt
#          ab        scripts/ab: step AB_STEP (default 13) against each NAME=PATCH of AB_VARIANTS
#                    (space-separated), AB_ROUNDS rounds (default 2), AB_ITERS iterations, AB_ONLY
#                    the measure.args lines (NAME,NAME; default all)              -> ab/
#   env: JOBS (default 16), TEST_JOBS (ctest -j, default 4), SWEEP_RANGE, SANITIZER_JOBS, DEADLINE
#        (seconds: parts past it are skipped or stopped, so that the archive is still written inside a
#        device call's limit), REDUCE_COMMIT (names the commit where .git is absent or may lag the tree,
#        as a device's copy can: give it), GPU_NAME (text the GPU's name must hold, e.g. H200: on any
#        other GPU nothing is built or run, for a call that asked for one kind and may be given another)
#   Where the parts' files belong in the repository (README.md's Layout): table/, sweep/ (or the parts
#   joined by scripts/merge_sweep), profile.*, ablation.*, variants.*, sass/ -> results/<gpu>/progression/;
#   <step>/ (and <step>/profile/) -> results/<gpu>/<step>/; the calls' summary.txt files, one after
#   another -> results/<gpu>/progression/gpu_check.txt (the one before moves to earlier/<its commit>/);
#   bits/check.txt: this GPU against the committed bits (exit 1 on a difference), nothing to copy; on
#   several GPUs topo.txt -> results/<gpu>_x<N>/16_multi_gpu/; ab/ -> results/<gpu>/<step>/variants/.
#   PERF_NOTES.md ("Regenerating ...") has the calls.
# Exit codes: 0 every part passed; 1 a part failed; 2 bad usage; 77 no GPU, or not the GPU_NAME asked for.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: PARTS=\"...\" scripts/gpu_session.sh OUT [build-dir]"
case "${1:-}" in
  -h|--help) sed -n '2,/^# Exit codes/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") echo "gpu_session: no OUT folder given ($usage)" >&2; exit 2 ;;
esac
out=$1
build=${2:-$root/build/gpu}
jobs=${JOBS:-16}
parts=" ${PARTS:-table} "
for p in $parts; do
  case $p in table|sweep|profile|ablation|variants|sass|tests|sanitizer|beyond|ncu_beyond|bits|ab) ;;
    *) echo "gpu_session: PARTS: unknown part '$p'" >&2; exit 2 ;;
  esac
done
[[ -z ${SWEEP_RANGE:-} || $SWEEP_RANGE =~ ^[0-9]+:[0-9]+$ ]] ||
  { echo "gpu_session: SWEEP_RANGE '$SWEEP_RANGE': expected MIN:MAX exponents, e.g. 10:24" >&2; exit 2; }
[[ $parts != *" ab "* || -n ${AB_VARIANTS:-} ]] ||
  { echo "gpu_session: PARTS names ab but AB_VARIANTS is empty (NAME=PATCH ..., e.g. rotated=perf/patches/13_rotated_reads.patch)" >&2; exit 2; }
[[ ${SANITIZER_JOBS:-4} =~ ^[1-9][0-9]*$ ]] ||
  { echo "gpu_session: SANITIZER_JOBS '${SANITIZER_JOBS}': expected a positive number" >&2; exit 2; }
mkdir -p "$out" 2>/dev/null && [ -w "$out" ] || { echo "gpu_session: cannot write into $out" >&2; exit 2; }
nvidia-smi -L >/dev/null 2>&1 || { echo "gpu_session: no GPU visible (nvidia-smi -L failed)" >&2; exit 77; }
if [ -n "${GPU_NAME:-}" ] && ! nvidia-smi -L | grep -qF -- "$GPU_NAME"; then
  echo "gpu_session: GPU_NAME=$GPU_NAME, but this machine has: $(nvidia-smi -L | head -n 1)" >&2
  exit 77
fi
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
export REDUCE_COMMIT=${REDUCE_COMMIT:-$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
work=$out/work
mkdir -p "$work"
summary=$out/summary.txt
status=0
note() { echo "$*" | tee -a "$summary"; }
want() { [[ $parts == *" $1 "* ]]; }
deadline=${DEADLINE:-100000}  # seconds after the start: later parts are skipped, a running one stopped
part() {  # part NAME COMMAND...: runs it, logs to work/NAME.log, notes the exit code and time
  local name=$1 start=$SECONDS rc
  shift
  if [ $SECONDS -ge "$deadline" ]; then note "$name: skipped (DEADLINE $deadline s reached)"; status=1; return 1; fi
  timeout $((deadline - SECONDS)) "$@" >"$work/$name.log" 2>&1
  rc=$?
  note "$name: exit $rc ($((SECONDS - start)) s)"
  [ $rc -eq 0 ] || { status=1; tail -n 15 "$work/$name.log" | sed 's/^/    /' | tee -a "$summary"; }
  return $rc
}

note "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1); nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'); commit $REDUCE_COMMIT; $(date -u +%F)"
# Several GPUs: how they are linked, beside 14's records (results/<gpu>_x<N>/16_multi_gpu/topo.txt).
# (nvidia-smi underlines the header with terminal escapes, even into a file: dropped.)
[ "$(nvidia-smi -L | wc -l)" -gt 1 ] && nvidia-smi topo -m 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >"$work/topo.txt"
part build bash -c "cmake -S '$root' -B '$build' -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DREDUCE_BUILD_PERF=ON && cmake --build '$build' -j$jobs -- -k 0"

want sass && part sass "$root/scripts/sass_excerpt" "$build" "$work/sass"
first=$(python3 "$root/scripts/suite.py" steps | head -n 1)
want ablation && part ablation bash -c "set -o pipefail; '$build/bin/perf/perf_variants' ablation | tee '$work/ablation.txt' &&
  python3 '$root/scripts/suite.py' provenance '$build/bin/$first' '$work/ablation.meta.json' --by 'perf/variants.cu, set ablation (scripts/gpu_session.sh)'"
# shellcheck disable=SC2317  # run by bash -c (exported below)
variants() {  # each set of PERF_SETS into variants.txt, then its provenance
  local set rc=0
  IFS=';' read -ra sets <<<"${PERF_SETS:-atomics;latency;tiles}"
  for set in "${sets[@]}"; do
    # shellcheck disable=SC2086  # "ends 24 28 30" is a set and its sizes
    "$build/bin/perf/perf_variants" $set >>"$work/variants.txt" || rc=1
    echo >>"$work/variants.txt"
  done
  [ $rc -eq 0 ] && python3 "$root/scripts/suite.py" provenance "$build/bin/$first" "$work/variants.meta.json" \
    --by "perf/variants.cu (scripts/gpu_session.sh)"
}
export -f variants && export build work root first  # timeout runs a program: bash -c variants
want variants && part variants bash -c variants
want table && part table "$root/scripts/run_all" --no-build --build-dir "$build" --out "$work/table"
want beyond && for s in $(sed -e 's/#.*//' -e '/^ *$/d' "$root/beyond.txt"); do
  [ -z "${BEYOND:-}" ] || [[ " $BEYOND " == *" ${s%%_*} "* ]] || continue
  [ -f "$root/$s/measure.args" ] || continue
  only=()
  if [[ $s == 14_* ]] && [ "$(nvidia-smi -L | wc -l)" -lt 2 ]; then  # one GPU: the reproducible mode's virtual ranks only
    only=(--only "$(sed -n 's/^\(repro_[a-z0-9_]*\) |.*/\1/p' "$root/$s/measure.args" | paste -sd, -)")
    note "beyond $s: one GPU, so only its reproducible mode (${only[1]})"
  fi
  part "beyond_$s" "$root/scripts/measure" "$s" "$build" "$work/$s" --force "${only[@]}"
done
want ncu_beyond && for s in $(sed -e 's/#.*//' -e '/^ *$/d' "$root/beyond.txt"); do
  [ -z "${BEYOND:-}" ] || [[ " $BEYOND " == *" ${s%%_*} "* ]] || continue
  [ -f "$root/$s/profile.args" ] || continue
  part "ncu_$s" "$root/scripts/profile_beyond" "$s" "$build" "$work/$s/profile"
done
if want ab; then
  ab_args=()
  for v in $AB_VARIANTS; do ab_args+=(--variant "$v"); done
  part ab env CUDAARCHS=90 "$root/scripts/ab" "${AB_STEP:-13}" "$work/ab" "${ab_args[@]}" --rounds "${AB_ROUNDS:-2}" \
    ${AB_ITERS:+--iters "$AB_ITERS"} ${AB_ONLY:+--only "$AB_ONLY"}
fi
want bits && part bits bash -c "mkdir -p '$work/bits' && '$build/bin/14_reproducible_bits' \
  --check '$root/14_reproducible/reproducible_bits.txt' | tee '$work/bits/check.txt'"
want tests && part tests bash -c "cd '$build' && ctest -j${TEST_JOBS:-4} --timeout 900 --output-junit junit.xml ${TESTS_REGEX:+-R '$TESTS_REGEX'} \
  ${TESTS_EXCLUDE:+-E '$TESTS_EXCLUDE'}; rc=\$?; cp junit.xml '$work/' 2>/dev/null; tail -n 40 Testing/Temporary/LastTest.log >/dev/null; exit \$rc"
want tests && grep -E "tests passed|tests failed|Total Test time" "$work/tests.log" | tee -a "$summary"
want tests && "$root/scripts/skip_reasons" "$build" 2>&1 | tail -n 12 | tee -a "$summary"
want sanitizer && part sanitizer env CHECKS=sanitizer CUDAARCHS=90 SANITIZER_JOBS="${SANITIZER_JOBS:-4}" LOG_DIR="$work/sanitizer_logs" "$root/scripts/check_gpu.sh" "$build"
want sanitizer && grep -E "compute-sanitizer|FAIL" "$work/sanitizer.log" | tee -a "$summary"
want profile && part profile "$root/scripts/profile_steps.sh" -o "$work/profile.csv" "$build"
want sweep && part sweep "$root/scripts/run_all" --no-build --build-dir "$build" --out "$work/sweep" --sweep \
  ${SWEEP_RANGE:+--sweep-range "$SWEEP_RANGE"}

# No machine's folder names in a summary that may be committed: paths inside the checkout made relative.
sed -i -e "s#$root/##g" -e "s#$out/##g" "$summary"
tar -czf "$out/results.tgz" -C "$work" .
rm -rf "$work"
note "gpu_session: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
