// Step 00: every thread adds its element with one atomic.
//
// What it shows: the shortest correct GPU sum. One thread per element, and each thread does
// atomicAdd(total, in[i]): the hardware makes every read-modify-write of `total` indivisible, so no
// addition is lost. But every one of the n additions goes to the same address, and the GPU performs
// atomics on one address one after another (in the L2 slice that owns it), so the kernel runs at
// the speed of that one unit, not of the memory: every SM of the GPU (132 on an H200) waits in one
// queue.
// Everything after this step is about not doing that: step 01 lets each block add its elements in a
// tree of its own and write one partial sum instead of blockDim.x atomics.
// Two more things to see here:
// - The accumulator is a double. Atomics into one float form a chain of n additions in whatever order
//   the threads arrive; once the total reaches 2^24 times the size of an element, float cannot
//   represent the next sum and the additions start to be rounded away (the README measures it). A
//   double accumulator keeps the chain's error far below float's, and a second one-thread kernel
//   converts it to the float result and zeroes it for the next run.
// - The result is not deterministic: the order of the additions depends on timing, so the last bits
//   of the double can differ from run to run (after rounding to float they rarely do).
// Build it alone, from the repository root (CMake builds every step at once: README.md):
// nvcc -O3 -arch=native -Icommon -DSTEP_NO=00 -o 00 00_atomic/atomic.cu common/*.cu common/*.cpp
// Usage: ./00_atomic [--n 2^26] [--block 256] [--pattern int] [--help]
#include "step.cuh"

namespace step00 {

// One element per thread, added straight into *total.
__global__ void reduce_atomic(const float* in, std::int64_t n, double* total) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;  // 64-bit: n may exceed 2^31
  if (i < n) atomicAdd(total, static_cast<double>(in[i]));
}

// One thread: the float result, and the accumulator zeroed for the next launch.
__global__ void reduce_atomic_finish(double* total, float* out) {
  *out = static_cast<float>(*total);
  *total = 0.0;
}

// Scratch: the double accumulator, zero between launches.
std::size_t scratch_bytes(std::int64_t, const reduce::LaunchConfig&) { return sizeof(double); }

cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  double* const total = static_cast<double*>(scratch.data);
  const std::int64_t blocks = std::max<std::int64_t>(reduce::ceil_div(n, cfg.block), 1);
  reduce_atomic<<<static_cast<unsigned>(blocks), cfg.block, 0, stream>>>(in, n, total);
  CUDA_TRY(cudaGetLastError());
  reduce_atomic_finish<<<1, 1, 0, stream>>>(total, out);
  return cudaGetLastError();
}

extern const reduce::Step kStep = {
    "00_atomic",
    "one atomicAdd per element",
    /*deterministic=*/false,
    reduce::BlockRule::any(),
    scratch_bytes,
    launch,
    /*needs_zeroed_scratch=*/true,
};

}  // namespace step00
