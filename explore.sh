#!/usr/bin/env bash
# One-off exploration (not committed): the suite's GPU session for 13/14/15, then 15's launch-bounds variants.
set -u
OUT=$1
export CCCL_DIR=$PWD/.cccl/nvidia/cu13/cccl/lib/cmake/cccl
REDUCE_COMMIT=$(git rev-parse --short=12 HEAD) DEADLINE=${D1:-400} PARTS="${P1:-tests beyond ncu_beyond bits}" TESTS_REGEX="${TR:-13_|14_|15_|Segment|Repro|Order|Shards}" TEST_JOBS=12 TESTS_EXCLUDE=Huge BEYOND="${BEY:-13 15}" scripts/gpu_session.sh $OUT/s
end=$((SECONDS + ${D2:-150}))
for q in ${QS:-2 3}; do
  [ $SECONDS -lt $end ] || break
  b=build/q$q
  { cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_FLAGS=-DREPRO_SM_QUARTERS=$q >/dev/null && cmake --build $b -j16 --target 15_reproducible >/dev/null; } 2>&1 | tail -3
  for k in ${SIZES:-16 20 22 23 24 26 28 30}; do
    [ $SECONDS -lt $end ] || break
    $b/bin/15_reproducible --n 2^$k --iters 30 --cpu-runs 0 --format json 2>&1 | python3 -c "
import sys,json
for l in sys.stdin:
  l=l.strip()
  if not l.startswith('{'): print(l); continue
  r=json.loads(l); print('q=$q n=2^$k', 'gbps', r.get('gbps'), 'vs10', r.get('vs_step10'), 'vs_g2g', r.get('vs_cub_g2g'), r.get('passed'))
"
  done
done 2>&1 | tee $OUT/variants.txt
