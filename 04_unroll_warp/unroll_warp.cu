// Step 04: unroll the last warp, safely.
//
// What it shows: once only 32 threads are left, they are one warp, so the last rounds need no
// block-wide __syncthreads(). And with the block size as a template parameter the compiler knows
// every round at compile time, unrolls the whole loop and drops the rounds a small block does not
// have.
// The trap: the classic version of this step (Harris 2007, still in many tutorials) runs the warp's
// rounds through a `volatile` shared array with no synchronization at all, trusting the 32 threads to
// run in lockstep. Since Volta, threads of a warp are scheduled independently (each has its own
// program counter) and are not guaranteed to be in lockstep; `volatile` only stops the compiler from
// caching values in registers, it orders nothing between threads. That code is a data race, and
// compute-sanitizer's racecheck reports it. Here every round is: write my partial, __syncwarp(),
// read my neighbour's, __syncwarp(). __syncwarp() is a barrier and memory fence for the warp, so each
// read sees the write it needs and no write overtakes a read still pending.
// What changed from step 03: the template block size (reduce::with_block_size turns --block into
// it), the loop that stops at 64, and warp_reduce().
// Build it alone, from the repository root (CMake builds every step at once: README.md):
// nvcc -O3 -arch=native -Icommon -DSTEP_NO=04 -o 04 04_unroll_warp/unroll_warp.cu common/*.cu common/*.cpp
// Usage: ./04_unroll_warp [--n 2^26] [--block 256] [--pattern int] [--help]
#include "step.cuh"

namespace step04 {

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

// Sums in[blockIdx.x * 2 * Block + (0 .. 2 * Block)) into partial[blockIdx.x]. Launch with Block threads.
template <unsigned Block>
__global__ void reduce_unroll_warp(const float* in, std::int64_t n, float* partial) {
  __shared__ float sdata[Block];
  const unsigned tid = threadIdx.x;
  const std::int64_t i = std::int64_t{blockIdx.x} * (2 * Block) + tid;  // 64-bit: n may exceed 2^31

  // Two loads, both issued before either is needed; past the end, 0 (the identity of +).
  const float a = i < n ? in[i] : 0.0f;
  const float b = i + Block < n ? in[i + Block] : 0.0f;
  sdata[tid] = a + b;
  __syncthreads();

#pragma unroll
  for (unsigned s = Block / 2; s > 32; s /= 2) {  // Block is known: the compiler unrolls every round
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    const float sum = warp_reduce<Block>(sdata, tid);
    if (tid == 0) partial[blockIdx.x] = sum;
  }
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

// Pass after pass, each block reduces 2 * Block values to one, until a single block writes `out`.
// n = 0 launches one block that writes 0.
template <unsigned Block>
cudaError_t launch_passes(const float* in, std::int64_t n, float* out, float* ping, float* pong,
                          const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  const float* src = in;
  std::int64_t count = n;
  for (int pass = 0;; ++pass) {
    const std::int64_t blocks = std::max<std::int64_t>(blocks_for(count, Block), 1);
    float* const dst = blocks == 1 ? out : (pass % 2 == 0 ? ping : pong);
    reduce_unroll_warp<Block><<<static_cast<unsigned>(blocks), Block, 0, stream>>>(src, count, dst);
    CUDA_TRY(cudaGetLastError());
    if (blocks == 1) return cudaSuccess;
    src = dst;
    count = blocks;
  }
}

cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  float* const ping = static_cast<float*>(scratch.data);
  float* const pong = ping + blocks_for(n, cfg.block);
  return reduce::with_block_size(cfg.block,
                                 [&](auto block) { return launch_passes<block>(in, n, out, ping, pong, cfg, stream); });
}

extern const reduce::Step kStep = {
    "04_unroll_warp",       "unrolled, warp-synchronous tail",
    /*deterministic=*/true, reduce::BlockRule::any(),          scratch_bytes, launch,
};

}  // namespace step04
