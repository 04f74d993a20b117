// Step 01: interleaved addressing, the naive tree.
//
// What it shows: the textbook parallel reduction. Each block copies blockDim.x elements into shared
// memory and adds them pairwise in log2(blockDim.x) rounds: in round s, thread t (if t is a multiple
// of 2s) adds the element s places to its right. The block's sum lands in element 0; one block-sum
// per block goes to scratch, and the same kernel runs again on those partial sums until one value
// is left, all on the GPU.
// Why it is slow: `tid % (2 * s) == 0` keeps every other, then every fourth... thread busy, so the
// active threads are scattered over all the warps (divergence: each warp still issues every
// instruction), the modulo is an expensive integer operation, and every thread loads only one
// element, so a block does very little work for its launch and its barriers.
// Build it alone, from the repository root (CMake builds every step at once: README.md):
// nvcc -O3 -arch=native -Icommon -DSTEP_NO=01 -o 01 01_interleaved/interleaved.cu common/*.cu common/*.cpp
// Usage: ./01_interleaved [--n 2^26] [--block 256] [--pattern int] [--help]
#include "step.cuh"

namespace step01 {

// Sums in[blockIdx.x * blockDim.x + (0 .. blockDim.x)) into partial[blockIdx.x].
// Needs blockDim.x * sizeof(float) bytes of dynamic shared memory; blockDim.x a power of two.
__global__ void reduce_interleaved(const float* in, std::int64_t n, float* partial) {
  extern __shared__ float sdata[];
  const unsigned tid = threadIdx.x;
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + tid;  // 64-bit: n may exceed 2^31

  sdata[tid] = i < n ? in[i] : 0.0f;  // past the end, 0: the identity of +
  __syncthreads();

  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
    __syncthreads();  // round s must finish before any thread reads its result in round 2s
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
    reduce_interleaved<<<static_cast<unsigned>(blocks), cfg.block, cfg.block * sizeof(float), stream>>>(src, count,
                                                                                                        dst);
    CUDA_TRY(cudaGetLastError());
    if (blocks == 1) return cudaSuccess;
    src = dst;
    count = blocks;
  }
}

extern const reduce::Step kStep = {
    "01_interleaved",       "interleaved tree (divergent)",
    /*deterministic=*/true, reduce::BlockRule::any(),       scratch_bytes, launch,
};

}  // namespace step01
