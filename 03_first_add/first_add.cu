// Step 03: first add during load.
//
// What it shows: in step 02 half of the threads go idle after the first round, and every thread's
// only global load is followed straight away by a barrier. Here each thread loads two elements,
// blockDim.x apart, and adds them before writing shared memory: a block covers 2 * blockDim.x
// elements, the grid is half as large, and every thread has two independent loads in flight.
// What changed from step 02: the index (2 * blockDim.x per block), the load, and the number of blocks
// per pass in the launcher.
// Build it alone, from the repository root (CMake builds every step at once: README.md):
// nvcc -O3 -arch=native -Icommon -DSTEP_NO=03 -o 03 03_first_add/first_add.cu common/*.cu common/*.cpp
// Usage: ./03_first_add [--n 2^26] [--block 256] [--pattern int] [--help]
#include "step.cuh"

namespace step03 {

// Sums in[blockIdx.x * 2 * blockDim.x + (0 .. 2 * blockDim.x)) into partial[blockIdx.x].
// Needs blockDim.x * sizeof(float) bytes of dynamic shared memory; blockDim.x a power of two.
__global__ void reduce_first_add(const float* in, std::int64_t n, float* partial) {
  extern __shared__ float sdata[];
  const unsigned tid = threadIdx.x;
  const std::int64_t i = std::int64_t{blockIdx.x} * (2 * blockDim.x) + tid;  // 64-bit: n may exceed 2^31

  // Two loads, both issued before either is needed; past the end, 0 (the identity of +).
  const float a = i < n ? in[i] : 0.0f;
  const float b = i + blockDim.x < n ? in[i + blockDim.x] : 0.0f;
  sdata[tid] = a + b;
  __syncthreads();

  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();  // round s must finish before any thread reads its result in round s/2
  }
  if (tid == 0) partial[blockIdx.x] = sdata[0];
}

// Each block covers 2 * block elements.
std::int64_t blocks_for(std::int64_t count, int block) { return reduce::ceil_div(count, 2 * std::int64_t{block}); }

// Scratch: two ping-pong arrays for the passes' partial sums (the second is needed only when there
// are three or more passes).
std::size_t scratch_bytes(std::int64_t n, const reduce::LaunchConfig& cfg) {
  const std::int64_t first = blocks_for(n, cfg.block);
  const std::int64_t second = blocks_for(first, cfg.block);
  if (first <= 1) return 0;
  return (first + (second > 1 ? second : 0)) * sizeof(float);
}

// Pass after pass, each block reduces 2 * blockDim.x values to one, until a single block writes
// `out`. n = 0 launches one block that writes 0.
cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  float* const ping = static_cast<float*>(scratch.data);
  float* const pong = ping + blocks_for(n, cfg.block);
  const float* src = in;
  std::int64_t count = n;
  for (int pass = 0;; ++pass) {
    const std::int64_t blocks = std::max<std::int64_t>(blocks_for(count, cfg.block), 1);
    float* const dst = blocks == 1 ? out : (pass % 2 == 0 ? ping : pong);
    reduce_first_add<<<static_cast<unsigned>(blocks), cfg.block, cfg.block * sizeof(float), stream>>>(src, count, dst);
    CUDA_TRY(cudaGetLastError());
    if (blocks == 1) return cudaSuccess;
    src = dst;
    count = blocks;
  }
}

extern const reduce::Step kStep = {
    "03_first_add",         "first add during load",
    /*deterministic=*/true, reduce::BlockRule::any(), scratch_bytes, launch,
};

}  // namespace step03
