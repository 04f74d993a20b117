#!/usr/bin/env bash
# Profiler counters behind the step READMEs' "what a profiler shows" sections: Nsight Compute on the
# first reduction kernel of every step (first pass, n = 2^24 floats by default), one CSV.
#
#   scripts/profile_steps.sh [build-dir] [n]     > profile.csv
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build/release}
n=${2:-2^24}
metrics=(
  dram__throughput.avg.pct_of_peak_sustained_elapsed         # share of DRAM bandwidth used
  smsp__thread_inst_executed_per_inst_executed.ratio         # active threads per warp instruction (32 = none idle)
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum         # shared-memory bank conflicts
  smsp__inst_executed.sum                                    # warp instructions issued
  sm__warps_active.avg.pct_of_peak_sustained_active          # achieved occupancy
  gpu__time_duration.sum                                     # kernel time
)
joined=$(IFS=,; echo "${metrics[*]%% *}")
first=1
for exe in "$build"/bin/0*; do
  # -k: the step's kernels (not the harness's L2 flush); -c 1: the first such launch.
  out=$(ncu --metrics "$joined" --csv -k 'regex:reduce_|DeviceReduce' -c 1 \
        "$exe" --n "$n" --iters 1 --warmup 0 --cpu-runs 0 2>/dev/null | grep '^"')
  if [ -z "$out" ]; then echo "profile_steps: no profile for $(basename "$exe")" >&2; continue; fi
  if [ $first -eq 1 ]; then echo "\"step\",$(head -n 1 <<<"$out")"; first=0; fi
  tail -n +2 <<<"$out" | sed "s/^/\"$(basename "$exe")\",/"
done
