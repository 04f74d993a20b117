// Step 10: a grid sized in tiles. Its gain has a cause that had to be found, not assumed.
//
// What it changes from step 09, three things at once: the loads of one round are a tile,
// Block * kLoadsInFlight float4s, contiguous, that one block reads together (block b reads tiles b,
// b + gridDim.x, ...), each thread issuing its kLoadsInFlight independent loads before the first add;
// the grid is sized in tiles, an eighth of step 09's blocks up to 2^20 floats on a 132-SM GPU, about
// a quarter at 2^21 and a half from 2^22 on; and the block is 512 threads. The last tile, cut short by
// the end of the array, is read the same way with the loads past the end masked.
// What it shows: Little's law (bytes in flight = bandwidth x latency) predicts no gain from more loads
// in flight at 2^20, where both grids already request the whole input at once, and the ablation
// (perf/variants.cu, set ablation; README, "The test: one change at a time") agrees: at 2^20 floats
// the tile-sized grid alone gives the gain, on both GPUs (fewer blocks: fewer partial sums for block 0
// to combine, and enough turns per thread that step 09's own four-load loop runs); at 2^22 only the
// three changes together; from 2^28 on the 512 threads on the H200, mostly the tiles on the H100.
// 512 threads per block unless --block says otherwise (256 is ahead up to 2^20 floats, 512 from 2^22
// on, on the H100 and the H200: README, "512 against 256 threads").
// Build it alone, from the repository root (CMake builds every step at once: README.md):
// nvcc -O3 -arch=native -Icommon -DSTEP_NO=10 -o 10 10_loads_in_flight/loads_in_flight.cu common/*.cu common/*.cpp
// Usage: ./10_loads_in_flight [--n 2^26] [--block 512] [--pattern int] [--help]
#include <cuda/atomic>

#include <cstdint>

#include "step.cuh"

namespace step10 {

constexpr int kLoadsInFlight = 4;  // independent float4 loads per thread before the first add

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

// This thread's share of in[0..n): the aligned body in tiles of Block * kLoadsInFlight float4s,
// block b reading tiles b, b + gridDim.x, ...; block 0's first threads also add the head and the tail.
template <unsigned Block>
__device__ float thread_sum(const float* in, std::int64_t n) {
  const auto misalignment = reinterpret_cast<std::uintptr_t>(in) % 16;        // 0, 4, 8 or 12 for a float*
  const std::int64_t unaligned = misalignment ? (16 - misalignment) / 4 : 0;  // floats before the first boundary
  const std::int64_t head = n < unaligned ? n : unaligned;
  const float4* body = reinterpret_cast<const float4*>(in + head);
  const std::int64_t vectors = (n - head) / 4;
  const std::int64_t tail = head + 4 * vectors;  // the first float after the body
  constexpr std::int64_t kTile = std::int64_t{Block} * kLoadsInFlight;

  float sum = 0.0f;  // past the end nothing is added: 0 is the identity of +
  if (blockIdx.x == 0 && threadIdx.x < head) sum += in[threadIdx.x];
  if (blockIdx.x == 0 && threadIdx.x < n - tail) sum += in[tail + threadIdx.x];
  for (std::int64_t base = blockIdx.x * kTile; base < vectors; base += kTile * gridDim.x) {
    float4 x[kLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) {  // all loads first...
      const std::int64_t v = base + k * Block + threadIdx.x;
      x[k] = v < vectors ? body[v] : float4{0.0f, 0.0f, 0.0f, 0.0f};
    }
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) sum += (x[k].x + x[k].y) + (x[k].z + x[k].w);  // ...then the adds
  }
  return sum;
}

// Sums this block's share of in[0..n) (thread_sum); blocks b > 0 hand their sums to block 0 through
// slots[b], block 0 writes the total to *out. Launch cooperatively with Block threads.
template <unsigned Block>
__global__ void reduce_loads_in_flight(const float* in, std::int64_t n, unsigned long long* slots, float* out) {
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
// input has tiles (a small n gets a small grid, at least one block). A cooperative
// launch needs exactly this bound: every block resident at once.
template <unsigned Block>
cudaError_t grid_size(std::int64_t n, int sm_count, int* blocks) {
  // Resident blocks per SM do not change for this kernel on this process's device, so it is asked
  // once; asking on every launch measured no slower (docs/method.md), this is only tidier.
  static int per_sm = 0;
  if (per_sm == 0)
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_loads_in_flight<Block>, Block, 0));
  *blocks = static_cast<int>(
      std::clamp<std::int64_t>(reduce::ceil_div(n, 4 * Block * kLoadsInFlight), 1, std::int64_t{per_sm} * sm_count));
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
  CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(reduce_loads_in_flight<Block>), blocks, Block,
                                       args, 0, stream));
  return cudaSuccess;
}

cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  auto* const slots = static_cast<unsigned long long*>(scratch.data);
  return reduce::with_block_size(cfg.block,
                                 [&](auto block) { return launch_grid<block>(in, n, out, slots, cfg, stream); });
}

extern const reduce::Step kStep = {
    "10_loads_in_flight",
    "a grid sized in tiles (fewer blocks)",
    /*deterministic=*/true,
    reduce::BlockRule::any(512),
    scratch_bytes,
    launch,
    /*needs_zeroed_scratch=*/true,
};

}  // namespace step10
