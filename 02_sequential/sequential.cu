// Step 02: sequential addressing.
//
// What it shows: the same tree as step 01 with the work kept together. In each round the first s
// threads (tid < s) add the element s places above them, and s halves: 128, 64, ..., 1 for a
// 256-thread block. Active threads are now consecutive, so whole warps are either busy or idle
// (no divergence until fewer than 32 remain; an idle warp skips the round's shared-memory accesses),
// and the modulo is gone. A warp's 32 threads read 32 consecutive words of shared memory, 32
// different banks; but step 01 had no bank conflicts either (its README says why), so banks are not
// what this step fixes.
// What changed from step 01: only the loop of the kernel.
// Build it alone, from the repository root (CMake builds every step at once: README.md):
// nvcc -O3 -arch=native -Icommon -DSTEP_NO=02 -o 02 02_sequential/sequential.cu common/*.cu common/*.cpp
// Usage: ./02_sequential [--n 2^26] [--block 256] [--pattern int] [--help]
#include "step.cuh"

namespace step02 {

// Sums in[blockIdx.x * blockDim.x + (0 .. blockDim.x)) into partial[blockIdx.x].
// Needs blockDim.x * sizeof(float) bytes of dynamic shared memory; blockDim.x a power of two.
__global__ void reduce_sequential(const float* in, std::int64_t n, float* partial) {
  extern __shared__ float sdata[];
  const unsigned tid = threadIdx.x;
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + tid;  // 64-bit: n may exceed 2^31

  sdata[tid] = i < n ? in[i] : 0.0f;  // past the end, 0: the identity of +
  __syncthreads();

  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();  // round s must finish before any thread reads its result in round s/2
  }
  if (tid == 0) partial[blockIdx.x] = sdata[0];
}

// Scratch: two ping-pong arrays for the passes' partial sums (the second is needed only when there
// are three or more passes).
std::size_t scratch_bytes(std::int64_t n, const reduce::LaunchConfig& cfg) {
  const std::int64_t first = reduce::ceil_div(n, cfg.block);
  const std::int64_t second = reduce::ceil_div(first, cfg.block);
  if (first <= 1) return 0;
  return (first + (second > 1 ? second : 0)) * sizeof(float);
}

// Pass after pass, each block reduces blockDim.x values to one, until a single block writes `out`.
// n = 0 launches one block that writes 0.
cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  float* const ping = static_cast<float*>(scratch.data);
  float* const pong = ping + reduce::ceil_div(n, cfg.block);
  const float* src = in;
  std::int64_t count = n;
  for (int pass = 0;; ++pass) {
    const std::int64_t blocks = std::max<std::int64_t>(reduce::ceil_div(count, cfg.block), 1);
    float* const dst = blocks == 1 ? out : (pass % 2 == 0 ? ping : pong);
    reduce_sequential<<<static_cast<unsigned>(blocks), cfg.block, cfg.block * sizeof(float), stream>>>(src, count, dst);
    CUDA_TRY(cudaGetLastError());
    if (blocks == 1) return cudaSuccess;
    src = dst;
    count = blocks;
  }
}

extern const reduce::Step kStep = {
    "02_sequential",        "sequential addressing",
    /*deterministic=*/true, reduce::BlockRule::any(), scratch_bytes, launch,
};

}  // namespace step02
