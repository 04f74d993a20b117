// Step 05: many elements per thread.
//
// What it shows: steps 01-04 launch one thread per element (or two) and pay for it in blocks that
// start, synchronize, reduce and retire after two loads each. Here the grid is sized from the
// device instead of from n: just enough blocks to fill every multiprocessor (SM count times the
// blocks per SM the occupancy calculator allows), and each thread walks the input with a
// grid-stride loop, adding up n / (grid * block) elements in a register before the block's tree
// runs once. The tree's cost is paid once per thread instead of once per two elements, and the
// multiprocessors stay busy streaming loads from start to end. A second launch with one block adds
// up the partial sums, one per block of the first (the executable prints how many on your GPU).
// What changed from step 04: the grid-stride loop replaces the two loads, and the launcher sizes the
// grid from the occupancy API and makes at most two passes.
// Build it alone, from the repository root (CMake builds every step at once: README.md):
// nvcc -O3 -arch=native -Icommon -DSTEP_NO=05 -o 05 05_multi_element/multi_element.cu common/*.cu common/*.cpp
// Usage: ./05_multi_element [--n 2^26] [--block 256] [--pattern int] [--help]
#include "step.cuh"

namespace step05 {

// The last rounds inside warp 0 (64 values to 1; 32 to 1 for a 32-thread block); returns the
// block's sum in lane 0.
// Lanes whose values are no longer needed keep computing; only their writes to their own slot
// matter, and those are ordered by the barriers.
template <unsigned Block>
__device__ float warp_reduce(float* sdata, unsigned tid) {
  float v = sdata[tid];
  if constexpr (Block >= 64) v += sdata[tid + 32];  // the round that brings 64 values down to 32
#pragma unroll
  for (unsigned offset = 16; offset > 0; offset /= 2) {
    sdata[tid] = v;
    __syncwarp();  // every lane's write lands before any lane reads it...
    if (tid < offset) v += sdata[tid + offset];
    __syncwarp();  // ...and every read is done before the next round overwrites
  }
  return v;
}

// Sums every gridDim.x * Block-th element of in[0..n), starting at this thread's global index, then
// the block's Block sums into partial[blockIdx.x]. Launch with Block threads.
template <unsigned Block>
__global__ void reduce_multi_element(const float* in, std::int64_t n, float* partial) {
  __shared__ float sdata[Block];
  const unsigned tid = threadIdx.x;
  const std::int64_t stride = std::int64_t{gridDim.x} * Block;

  float sum = 0.0f;  // past the end nothing is added: 0 is the identity of +
  for (std::int64_t i = std::int64_t{blockIdx.x} * Block + tid; i < n; i += stride) sum += in[i];
  sdata[tid] = sum;
  __syncthreads();

#pragma unroll
  for (unsigned s = Block / 2; s > 32; s /= 2) {  // Block is known: the compiler unrolls every round
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    const float sum_of_block = warp_reduce<Block>(sdata, tid);
    if (tid == 0) partial[blockIdx.x] = sum_of_block;
  }
}

// Blocks that fill the device: SM count times resident blocks per SM, but no more blocks than the
// input has Block-sized pieces (a small n gets a small grid, at least one block).
template <unsigned Block>
cudaError_t grid_size(std::int64_t n, int sm_count, int* blocks) {
  // Resident blocks per SM do not change for this kernel on this process's device, so it is asked
  // once; asking on every launch measured no slower (docs/method.md), this is only tidier.
  static int per_sm = 0;
  if (per_sm == 0)
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_multi_element<Block>, Block, 0));
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
  reduce_multi_element<Block><<<blocks, Block, 0, stream>>>(in, n, blocks == 1 ? out : partial);
  CUDA_TRY(cudaGetLastError());
  if (blocks == 1) return cudaSuccess;
  reduce_multi_element<Block><<<1, Block, 0, stream>>>(partial, blocks, out);
  return cudaGetLastError();
}

cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  float* const partial = static_cast<float*>(scratch.data);
  return reduce::with_block_size(cfg.block,
                                 [&](auto block) { return launch_passes<block>(in, n, out, partial, cfg, stream); });
}

extern const reduce::Step kStep = {
    "05_multi_element",     "many elements per thread (grid-stride)",
    /*deterministic=*/true, reduce::BlockRule::any(),
    scratch_bytes,          launch,
};

}  // namespace step05
