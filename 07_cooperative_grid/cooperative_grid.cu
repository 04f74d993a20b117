// Step 07: one cooperative launch.
//
// What it shows: steps 05 and 06 need two launches, because the blocks of one grid cannot wait for
// each other: a block may not even have started while another runs, so a second kernel adds their
// partial sums. A cooperative launch changes that. It guarantees that every block of the grid is
// resident on the GPU at the same time, and with that guarantee Cooperative Groups offer a barrier
// for the whole grid: cg::this_grid().sync(). Every block writes its partial sum, the grid waits at
// the barrier, and block 0 adds the partial sums in block order (the same bits on every run). One
// launch instead of two.
// The guarantee has a price and a limit: the grid may not have more blocks than fit on the device at
// once (the launcher asks the occupancy API, and cudaLaunchCooperativeKernel refuses a larger grid
// with cudaErrorCooperativeLaunchTooLarge), and the device must support cooperative launch (checked).
// grid.sync() in a kernel started with <<<>>> is not allowed (CUDA 13's Cooperative Groups detect it
// and abort the kernel); a hand-made grid barrier there would wait forever for blocks that cannot start.
// What changed from step 06: the kernel ends with grid.sync() and block 0's sum of the partial sums,
// and the launcher makes one cooperative launch instead of two plain ones.
// Build it alone, from the repository root (CMake builds every step at once: README.md):
// nvcc -O3 -arch=native -Icommon -DSTEP_NO=07 -o 07 07_cooperative_grid/cooperative_grid.cu common/*.cu common/*.cpp
// Usage: ./07_cooperative_grid [--n 2^26] [--block 256] [--pattern int] [--help]
#include <cooperative_groups.h>

#include "step.cuh"

namespace step07 {

namespace cg = cooperative_groups;

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
// the block's Block sums into partial[blockIdx.x]; after the grid barrier block 0 sums the partial
// sums into *out. Launch cooperatively with Block threads.
template <unsigned Block>
__global__ void reduce_cooperative_grid(const float* in, std::int64_t n, float* partial, float* out) {
  const std::int64_t stride = std::int64_t{gridDim.x} * Block;

  float sum = 0.0f;  // past the end nothing is added: 0 is the identity of +
  for (std::int64_t i = std::int64_t{blockIdx.x} * Block + threadIdx.x; i < n; i += stride) sum += in[i];

  const float sum_of_block = block_sum<Block>(sum);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum_of_block;
  cg::this_grid().sync();  // every block's partial sum is written, and visible to every block
  if (blockIdx.x != 0) return;

  float v = 0.0f;  // block 0: thread t adds partial[t], partial[t + Block], ... in that order
  for (unsigned b = threadIdx.x; b < gridDim.x; b += Block) v += partial[b];
  const float total = block_sum<Block>(v);
  if (threadIdx.x == 0) *out = total;
}

// Blocks that fill the device: SM count times resident blocks per SM, but no more blocks than the
// input has Block-sized pieces (a small n gets a small grid, at least one block). A cooperative
// launch needs exactly this bound: every block resident at once.
template <unsigned Block>
cudaError_t grid_size(std::int64_t n, int sm_count, int* blocks) {
  // Resident blocks per SM do not change for this kernel on this process's device, so it is asked
  // once; asking on every launch measured no slower (docs/method.md), this is only tidier.
  static int per_sm = 0;
  if (per_sm == 0)
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_cooperative_grid<Block>, Block, 0));
  *blocks = static_cast<int>(std::clamp<std::int64_t>(reduce::ceil_div(n, Block), 1, std::int64_t{per_sm} * sm_count));
  return cudaSuccess;
}

// Scratch: one partial sum per block; at most 32 blocks of 32 threads per SM.
std::size_t scratch_bytes(std::int64_t, const reduce::LaunchConfig& cfg) {
  return std::size_t{32} * cfg.sm_count * sizeof(float);
}

// One cooperative launch: the device-filling grid reduces in[0..n) to `out`.
template <unsigned Block>
cudaError_t launch_grid(const float* in, std::int64_t n, float* out, float* partial, const reduce::LaunchConfig& cfg,
                        cudaStream_t stream) {
  int blocks = 0;
  CUDA_TRY(grid_size<Block>(n, cfg.sm_count, &blocks));
  int cooperative = 0;
  CUDA_TRY(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, cfg.device));
  if (!cooperative) return cudaErrorNotSupported;
  void* args[] = {&in, &n, &partial, &out};
  CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(reduce_cooperative_grid<Block>), blocks, Block,
                                       args, 0, stream));
  return cudaSuccess;
}

cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  float* const partial = static_cast<float*>(scratch.data);
  return reduce::with_block_size(cfg.block,
                                 [&](auto block) { return launch_grid<block>(in, n, out, partial, cfg, stream); });
}

extern const reduce::Step kStep = {
    "07_cooperative_grid",  "one cooperative launch (grid.sync)",
    /*deterministic=*/true, reduce::BlockRule::any(),
    scratch_bytes,          launch,
};

}  // namespace step07
