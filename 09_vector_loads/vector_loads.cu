// Step 09: 16-byte loads.
//
// What it shows: up to step 08 every thread loads one 4-byte float per loop iteration, so streaming n
// floats takes n load instructions, each with its address arithmetic and loop test. One float4 load
// moves 16 bytes in one instruction: a quarter of the load instructions and loop iterations for the
// same bytes, and each warp's request is 512 contiguous bytes. The catch is alignment: a float4 load
// needs a 16-byte aligned address, and the input may start anywhere a float may (a sub-array, say).
// So the array is cut in three: up to 3 floats before the first 16-byte boundary (the head), the
// aligned body read as float4s, and up to 3 floats after the last whole float4 (the tail). Block 0's
// first threads add the head and the tail; everything else is the body. nvcc unrolls the body's loop
// by four: it counts a thread's turns (a division), runs turns mod 4 single-load turns, and then, only
// if four turns or more remain, a main loop that issues four float4 loads before its first add
// (results/h200/progression/sass/09_main_loop.txt). A thread with fewer
// than four turns (up to 2^21 floats at 256 threads on a 132-SM GPU) has one load in flight at a time.
// What changed from step 08: thread_sum() reads the body as float4s and adds the head and tail; the
// grid is sized for n / 4 float4s.
// Build it alone, from the repository root (CMake builds every step at once: README.md):
// nvcc -O3 -arch=native -Icommon -DSTEP_NO=09 -o 09 09_vector_loads/vector_loads.cu common/*.cu common/*.cpp
// Usage: ./09_vector_loads [--n 2^26] [--block 256] [--pattern int] [--help]
#include <cuda/atomic>

#include <cstdint>

#include "step.cuh"

namespace step09 {

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

// The hand-over from block b > 0 to block 0: slot[b] holds b's sum in its low 32 bits and kFull in
// its high ones. Slots are zero (empty) between launches: the harness hands over zero-filled scratch,
// and block 0 empties every slot it reads.
using Slot = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;
constexpr unsigned long long kFull = 1ull << 32;

// Block 0: thread t adds its own sum (thread 0: block 0's) and slots t, t + Block, ... in that order,
// waiting for each to be full.
template <unsigned Block>
__device__ float collect_partials(unsigned long long* slots, float own) {
  float v = threadIdx.x == 0 ? own : 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += Block) {
    if (b == 0) continue;  // block 0's own sum is `own`
    unsigned long long w;
    while (!((w = Slot(slots[b]).load(cuda::memory_order_relaxed)) & kFull)) {
      // block b has not finished yet
    }
    v += __uint_as_float(static_cast<unsigned>(w));
    Slot(slots[b]).store(0, cuda::memory_order_relaxed);  // empty again for the next launch
  }
  return v;
}

// This thread's share of in[0..n): every gridDim.x * Block-th float4 of the aligned body, starting at
// this thread's global index; block 0's first threads also add the head and the tail.
template <unsigned Block>
__device__ float thread_sum(const float* in, std::int64_t n) {
  const auto misalignment = reinterpret_cast<std::uintptr_t>(in) % 16;        // 0, 4, 8 or 12 for a float*
  const std::int64_t unaligned = misalignment ? (16 - misalignment) / 4 : 0;  // floats before the first boundary
  const std::int64_t head = n < unaligned ? n : unaligned;
  const float4* body = reinterpret_cast<const float4*>(in + head);
  const std::int64_t vectors = (n - head) / 4;
  const std::int64_t tail = head + 4 * vectors;  // the first float after the body
  const std::int64_t stride = std::int64_t{gridDim.x} * Block;

  float sum = 0.0f;  // past the end nothing is added: 0 is the identity of +
  if (blockIdx.x == 0 && threadIdx.x < head) sum += in[threadIdx.x];
  if (blockIdx.x == 0 && threadIdx.x < n - tail) sum += in[tail + threadIdx.x];
  for (std::int64_t i = std::int64_t{blockIdx.x} * Block + threadIdx.x; i < vectors; i += stride) {
    const float4 x = body[i];
    sum += (x.x + x.y) + (x.z + x.w);
  }
  return sum;
}

// Sums this block's share of in[0..n) (thread_sum); blocks b > 0 hand their sums to block 0 through
// slots[b], block 0 writes the total to *out. Launch cooperatively with Block threads.
template <unsigned Block>
__global__ void reduce_vector_loads(const float* in, std::int64_t n, unsigned long long* slots, float* out) {
  const float sum = thread_sum<Block>(in, n);

  const float sum_of_block = block_sum<Block>(sum);
  if (blockIdx.x != 0) {
    if (threadIdx.x == 0)
      Slot(slots[blockIdx.x]).store(kFull | __float_as_uint(sum_of_block), cuda::memory_order_relaxed);
    return;
  }
  const float v = collect_partials<Block>(slots, sum_of_block);
  __syncthreads();  // block_sum's shared array is used a second time
  const float total = block_sum<Block>(v);
  if (threadIdx.x == 0) *out = total;
}

// Blocks that fill the device: SM count times resident blocks per SM, but no more blocks than the
// input has pieces of Block float4s (a small n gets a small grid, at least one block). A cooperative
// launch needs exactly this bound: every block resident at once.
template <unsigned Block>
cudaError_t grid_size(std::int64_t n, int sm_count, int* blocks) {
  // Resident blocks per SM do not change for this kernel on this process's device, so it is asked
  // once; asking on every launch measured no slower (docs/method.md), this is only tidier.
  static int per_sm = 0;
  if (per_sm == 0)
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_vector_loads<Block>, Block, 0));
  *blocks =
      static_cast<int>(std::clamp<std::int64_t>(reduce::ceil_div(n, 4 * Block), 1, std::int64_t{per_sm} * sm_count));
  return cudaSuccess;
}

// Scratch: one slot per block; at most 32 blocks of 32 threads per SM.
std::size_t scratch_bytes(std::int64_t, const reduce::LaunchConfig& cfg) {
  return std::size_t{32} * cfg.sm_count * sizeof(unsigned long long);
}

// One cooperative launch: the device-filling grid reduces in[0..n) to `out`. A single block waits for
// nobody, but takes the same path.
template <unsigned Block>
cudaError_t launch_grid(const float* in, std::int64_t n, float* out, unsigned long long* slots,
                        const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  int blocks = 0;
  CUDA_TRY(grid_size<Block>(n, cfg.sm_count, &blocks));
  int cooperative = 0;
  CUDA_TRY(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, cfg.device));
  if (!cooperative) return cudaErrorNotSupported;
  void* args[] = {&in, &n, &slots, &out};
  CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(reduce_vector_loads<Block>), blocks, Block, args,
                                       0, stream));
  return cudaSuccess;
}

cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  auto* const slots = static_cast<unsigned long long*>(scratch.data);
  return reduce::with_block_size(cfg.block,
                                 [&](auto block) { return launch_grid<block>(in, n, out, slots, cfg, stream); });
}

extern const reduce::Step kStep = {
    "09_vector_loads",
    "16-byte (float4) loads",
    /*deterministic=*/true,
    reduce::BlockRule::any(),
    scratch_bytes,
    launch,
    /*needs_zeroed_scratch=*/true,
};

}  // namespace step09
