// Step 08: only block 0 waits.
//
// What it shows: step 07's grid.sync() makes every block wait for every other, although only block 0
// needs the others' partial sums, and only at the very end. A barrier for the whole grid costs a
// round trip through memory for all of it. Here each block b > 0 hands its partial sum straight to
// block 0 and leaves: it writes the sum together with a "full" flag into one 8-byte slot, slot[b], with
// a single store. Block 0 waits only for the slots it has not yet seen full, adds the sums in slot
// order (the same bits on every run) and empties each slot for the next launch. The store and the
// loads are relaxed device-scope atomic_ref operations on one 8-byte word: strong accesses of the
// same bytes, which the PTX memory model makes single-copy atomic, so a reader that sees the flag also
// sees the value written with it: no fence, no counter. (Alignment alone would not do: plain loads
// and stores that race on the word are a data race.) The launch is still cooperative: block 0 may
// only spin on the others' slots because the launch guarantees that they are all resident and will
// get there.
// What changed from step 07: the slots and their flag replace partial[] and grid.sync(); block 0
// collects with collect_partials(); the scratch must start zero-filled (the harness's contract) and
// is left that way.
// Build it alone, from the repository root (CMake builds every step at once: README.md):
// nvcc -O3 -arch=native -Icommon -DSTEP_NO=08 -o 08 08_flag_handover/flag_handover.cu common/*.cu common/*.cpp
// Usage: ./08_flag_handover [--n 2^26] [--block 256] [--pattern int] [--help]
#include <cuda/atomic>

#include "step.cuh"

namespace step08 {

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

// Sums every gridDim.x * Block-th element of in[0..n), starting at this thread's global index, then
// the block's Block sums; blocks b > 0 hand theirs to block 0 through slots[b], block 0 writes the
// total to *out. Launch cooperatively with Block threads.
template <unsigned Block>
__global__ void reduce_flag_handover(const float* in, std::int64_t n, unsigned long long* slots, float* out) {
  const std::int64_t stride = std::int64_t{gridDim.x} * Block;

  float sum = 0.0f;  // past the end nothing is added: 0 is the identity of +
  for (std::int64_t i = std::int64_t{blockIdx.x} * Block + threadIdx.x; i < n; i += stride) sum += in[i];

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
// input has Block-sized pieces (a small n gets a small grid, at least one block). A cooperative
// launch needs exactly this bound: every block resident at once.
template <unsigned Block>
cudaError_t grid_size(std::int64_t n, int sm_count, int* blocks) {
  // Resident blocks per SM do not change for this kernel on this process's device, so it is asked
  // once; asking on every launch measured no slower (docs/method.md), this is only tidier.
  static int per_sm = 0;
  if (per_sm == 0)
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_flag_handover<Block>, Block, 0));
  *blocks = static_cast<int>(std::clamp<std::int64_t>(reduce::ceil_div(n, Block), 1, std::int64_t{per_sm} * sm_count));
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
  CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(reduce_flag_handover<Block>), blocks, Block, args,
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
    "08_flag_handover",
    "only block 0 waits (flagged slots)",
    /*deterministic=*/true,
    reduce::BlockRule::any(),
    scratch_bytes,
    launch,
    /*needs_zeroed_scratch=*/true,
};

}  // namespace step08
