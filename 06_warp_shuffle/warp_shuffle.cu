// Step 06: warp shuffle.
//
// What it shows: threads of a warp can read each other's registers directly with
// __shfl_down_sync(mask, v, offset): lane i receives lane i + offset's v, with no shared memory, no
// bank, no barrier beyond the warp. Five shuffle rounds (16, 8, 4, 2, 1) reduce a warp's 32 values
// to one in lane 0. The block then needs shared memory only for one value per warp: each warp's
// lane 0 writes its sum to warp_sums[warp], one __syncthreads(), and warp 0 shuffles those (at most
// 32) down to the block's sum. A 256-thread block goes from 8 shared-memory rounds with 3 barriers
// (step 05) to 10 shuffles with one barrier.
// The XOR butterfly, __shfl_xor_sync(mask, v, offset), is the alternative: every lane ends with the
// full sum instead of lane 0 alone; it costs the same here, and is the one to use when every lane
// needs the result (a softmax's max, say).
// What changed from step 05: warp_sum() and block_sum() replace the shared-memory tree.
// Build it alone, from the repository root (CMake builds every step at once: README.md):
// nvcc -O3 -arch=native -Icommon -DSTEP_NO=06 -o 06 06_warp_shuffle/warp_shuffle.cu common/*.cu common/*.cpp
// Usage: ./06_warp_shuffle [--n 2^26] [--block 256] [--pattern int] [--help]
#include "step.cuh"

namespace step06 {

constexpr unsigned kFullMask = 0xffffffffu;  // all 32 lanes take part in every shuffle

// The sum of v over the warp, in lane 0 (other lanes hold partial sums).
__device__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

// The sum of v over the block, in thread 0. Block threads, a multiple of 32.
template <unsigned Block>
__device__ float block_sum(float v) {
  constexpr unsigned kWarps = Block / 32;
  __shared__ float warp_sums[kWarps];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  v = warp_sum(v);
  if constexpr (kWarps == 1) return v;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) v = warp_sum(lane < kWarps ? warp_sums[lane] : 0.0f);
  return v;
}

// Sums every gridDim.x * Block-th element of in[0..n), starting at this thread's global index, then
// the block's Block sums into partial[blockIdx.x]. Launch with Block threads.
template <unsigned Block>
__global__ void reduce_warp_shuffle(const float* in, std::int64_t n, float* partial) {
  const std::int64_t stride = std::int64_t{gridDim.x} * Block;

  float sum = 0.0f;  // past the end nothing is added: 0 is the identity of +
  for (std::int64_t i = std::int64_t{blockIdx.x} * Block + threadIdx.x; i < n; i += stride) sum += in[i];

  const float sum_of_block = block_sum<Block>(sum);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum_of_block;
}

// Blocks that fill the device: SM count times resident blocks per SM, but no more blocks than the
// input has Block-sized pieces (a small n gets a small grid, at least one block).
template <unsigned Block>
cudaError_t grid_size(std::int64_t n, int sm_count, int* blocks) {
  // Resident blocks per SM do not change for this kernel on this process's device, so it is asked
  // once; asking on every launch measured no slower (docs/method.md), this is only tidier.
  static int per_sm = 0;
  if (per_sm == 0)
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_warp_shuffle<Block>, Block, 0));
  *blocks = static_cast<int>(std::clamp<std::int64_t>(reduce::ceil_div(n, Block), 1, std::int64_t{per_sm} * sm_count));
  return cudaSuccess;
}

// Scratch: one partial sum per block of the first pass; at most 32 blocks of 32 threads per SM.
std::size_t scratch_bytes(std::int64_t, const reduce::LaunchConfig& cfg) {
  return std::size_t{32} * cfg.sm_count * sizeof(float);
}

// Pass 1: the device-filling grid reduces in[0..n) to one value per block.
// Pass 2: one block reduces those to `out` (skipped when pass 1 had a single block).
template <unsigned Block>
cudaError_t launch_passes(const float* in, std::int64_t n, float* out, float* partial, const reduce::LaunchConfig& cfg,
                          cudaStream_t stream) {
  int blocks = 0;
  CUDA_TRY(grid_size<Block>(n, cfg.sm_count, &blocks));
  reduce_warp_shuffle<Block><<<blocks, Block, 0, stream>>>(in, n, blocks == 1 ? out : partial);
  CUDA_TRY(cudaGetLastError());
  if (blocks == 1) return cudaSuccess;
  reduce_warp_shuffle<Block><<<1, Block, 0, stream>>>(partial, blocks, out);
  return cudaGetLastError();
}

cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  float* const partial = static_cast<float*>(scratch.data);
  return reduce::with_block_size(cfg.block,
                                 [&](auto block) { return launch_passes<block>(in, n, out, partial, cfg, stream); });
}

extern const reduce::Step kStep = {
    "06_warp_shuffle",      "warp shuffle reduction",
    /*deterministic=*/true, reduce::BlockRule::any(), scratch_bytes, launch,
};

}  // namespace step06
