// Step 07: one cooperative launch at memory speed.
//
// What it shows: steps 05 and 06 need two launches: the grid's blocks cannot wait for each other, so
// a second kernel adds their partial sums. A cooperative launch guarantees that every block of the
// grid is resident at once, and that makes it legal for one block to wait for the others inside the
// kernel. The general tool for that is grid.sync(), a barrier every block waits at; here only block 0
// has to wait, and only for the partial sums, so the blocks hand them over directly: block b writes
// its sum together with a "full" flag in one 8-byte slot, block 0 waits until every slot is full,
// adds them in slot order (the same bits every run: no floating-point atomics) and empties the slots
// for the next launch. That costs about 0.2 us against grid.sync()'s 2.4 us (PERF_NOTES.md), which
// decides the mid sizes, where a whole reduction takes 6 to 30 us.
// The grid must fit on the device at once: its size comes from the occupancy API times the SM count,
// and the device must support cooperative launch (checked; a plain launch could deadlock).
// Cooperative Groups name the levels: this_thread_block(), tiled_partition<32>() for the warp, and
// cg::reduce() for the warp's sum (a shuffle tree, as in step 06).
// What else changed from step 06, for the last step to reach DRAM speed: each thread loads 16 bytes
// (a float4) at a time, issues kLoadsInFlight of those loads before adding any, so enough bytes are
// in flight to cover the latency of DRAM, and each block reads contiguous tiles. A small input takes
// a single block and a plain launch. This step runs 512 threads per block unless --block says
// otherwise: on the H100 that measured faster than 256 at every size from 2^21 floats up, in five
// runs (by 1-10% at 2^22, 5-7% at 2^23; PERF_NOTES.md).
// Usage: ./07_cooperative_grid [--n 2^26] [--block 512] [--pattern int] [--help]
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda/atomic>

#include <cstdint>

#include "step.cuh"

namespace step07 {

namespace cg = cooperative_groups;

constexpr int kLoadsInFlight = 4;  // independent 16-byte loads per thread before the first add

// A 16-byte load for data read exactly once: through the read-only path (.nc), not kept in L1
// (L1::no_allocate), and with a hint that L2 may fetch the whole 256-byte sector group from DRAM
// (L2::256B). Measured on the H100 it is worth about 2% at 2^24 floats and less at larger n
// (PERF_NOTES.md); a plain `*p` is correct too. The size hint needs sm_80; Turing gets __ldg.
__device__ float4 load_streaming(const float4* p) {
#if __CUDA_ARCH__ >= 800
  float4 r;
  asm("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
      : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w)
      : "l"(p));
  return r;
#else
  return __ldg(p);
#endif
}

// This thread's share of in[0..n). The float4 part is cut into tiles of Block * kLoadsInFlight
// vectors; block b reads tiles b, b + gridDim.x, ... and each thread issues its kLoadsInFlight loads
// of a tile before adding any, so enough bytes are in flight to cover DRAM's latency, and a block
// always reads one contiguous 32 KB (for 512 threads) stretch at a time. The up to 3 scalars before
// the first 16-byte boundary and the up to 3 after the last float4 go to block 0.
template <unsigned Block>
__device__ float thread_sum(const float* __restrict__ in, std::int64_t n) {
  const auto misalignment = reinterpret_cast<std::uintptr_t>(in) % 16;  // 0, 4, 8 or 12 for a float*
  const std::int64_t unaligned = misalignment ? (16 - misalignment) / 4 : 0;
  const std::int64_t head = n < unaligned ? n : unaligned;
  const float4* __restrict__ body = reinterpret_cast<const float4*>(in + head);
  const std::int64_t vectors = (n - head) / 4;
  const std::int64_t tail = head + 4 * vectors;

  float sum = 0.0f;
  if (blockIdx.x == 0 && threadIdx.x < head) sum += in[threadIdx.x];
  if (blockIdx.x == 0 && threadIdx.x < n - tail) sum += in[tail + threadIdx.x];

  constexpr std::int64_t kTile = std::int64_t{Block} * kLoadsInFlight;  // float4s per block per round
  std::int64_t base = blockIdx.x * kTile;
  for (; base + kTile <= vectors; base += kTile * gridDim.x) {
    float4 x[kLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) x[k] = load_streaming(body + base + k * Block + threadIdx.x);  // all loads first...
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) sum += (x[k].x + x[k].y) + (x[k].z + x[k].w);  // ...then the adds
  }
  if (base < vectors) {  // the last tile, cut short by the end: the same loads, all in flight, none past the end
    float4 x[kLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) {
      const std::int64_t v = base + k * Block + threadIdx.x;
      x[k] = v < vectors ? load_streaming(body + v) : float4{0.0f, 0.0f, 0.0f, 0.0f};
    }
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) sum += (x[k].x + x[k].y) + (x[k].z + x[k].w);
  }
  return sum;
}

// The sum of v over the block, in thread 0: cg::reduce within each warp, then warp 0 reduces the
// warps' sums from shared memory.
template <unsigned Block>
__device__ float block_sum(const cg::thread_block& block, float v) {
  constexpr unsigned kWarps = Block / 32;
  __shared__ float warp_sums[kWarps];
  const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);

  v = cg::reduce(warp, v, cg::plus<float>());
  if constexpr (kWarps == 1) return v;
  if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = v;
  block.sync();
  if (warp.meta_group_rank() == 0)
    v = cg::reduce(warp, warp.thread_rank() < kWarps ? warp_sums[warp.thread_rank()] : 0.0f, cg::plus<float>());
  return v;
}

// The hand-over from block b > 0 to block 0: slot[b] holds b's sum in its low 32 bits and kFull in
// its high ones. One aligned 8-byte store is indivisible, so a reader that sees the flag sees the
// value written with it: no fence and no atomic counter are needed. Slots are zero (empty) between
// launches: the harness hands over zero-filled scratch, and block 0 empties every slot it read.
using Slot = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;
constexpr unsigned long long kFull = 1ull << 32;

// Block 0 only: own (block 0's sum, in thread 0) plus this thread's share of the other blocks'
// slots, b = threadIdx.x, threadIdx.x + Block, ..., in that order, so the bits never depend on which
// block finished first. (Reading a thread's slots with all loads in flight at once instead measured
// slower at 2^20 and 2^21 floats: PERF_NOTES.md.)
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

// Reduces in[0..n) to *out in one launch. With more than one block it must be launched cooperatively
// (block 0 waits for the others); a single block needs neither that nor any slot.
template <unsigned Block>
__global__ void __launch_bounds__(Block) reduce_cooperative(const float* __restrict__ in, std::int64_t n,
                                                            unsigned long long* slots, float* out) {
  const cg::thread_block block = cg::this_thread_block();
  // The timed runs start with a cold L2: block 0 asks for its slots' cache lines now (16 slots per
  // 128-byte line), so its first reads of them at the end do not wait for DRAM.
  if (blockIdx.x == 0 && gridDim.x > 1)
    for (unsigned b = 16 * threadIdx.x; b < gridDim.x; b += 16 * Block)
      asm volatile("prefetch.global.L2 [%0];" ::"l"(slots + b));

  const float sum = block_sum<Block>(block, thread_sum<Block>(in, n));
  if (gridDim.x == 1) {  // a small input: this block's sum is the answer
    if (block.thread_rank() == 0) *out = sum;
    return;
  }
  if (blockIdx.x != 0) {
    if (block.thread_rank() == 0)
      Slot(slots[blockIdx.x]).store(kFull | __float_as_uint(sum), cuda::memory_order_relaxed);
    return;
  }
  const float v = collect_partials<Block>(slots, sum);
  block.sync();  // block_sum's shared array is used a second time
  const float total = block_sum<Block>(block, v);
  if (block.thread_rank() == 0) *out = total;
}

// Scratch: one slot per block; at most 32 resident blocks per SM.
std::size_t scratch_bytes(std::int64_t, const reduce::LaunchConfig& cfg) {
  return std::size_t{32} * cfg.sm_count * sizeof(unsigned long long);
}

template <unsigned Block>
cudaError_t launch_grid(const float* in, std::int64_t n, float* out, unsigned long long* slots,
                        const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  // As many blocks as are resident at once (the cooperative limit), but no more than the input has
  // tiles: a small n gets a small grid, and up to one tile (8192 floats for 512 threads) one block.
  // Resident blocks per SM never change for this kernel on this process's device: ask once. (Asking
  // on every launch costs microseconds of host time, enough to leave the GPU waiting between runs.)
  static int per_sm = 0;
  if (per_sm == 0) CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_cooperative<Block>, Block, 0));
  const std::int64_t per_block_round = std::int64_t{Block} * kLoadsInFlight * 4;
  const int blocks = static_cast<int>(
      std::clamp<std::int64_t>(reduce::ceil_div(n, per_block_round), 1, std::int64_t{per_sm} * cfg.sm_count));

  if (blocks == 1) {  // small input: one block, a plain launch, nothing to wait for
    reduce_cooperative<Block><<<1, Block, 0, stream>>>(in, n, slots, out);
    return cudaGetLastError();
  }
  int cooperative = 0;
  CUDA_TRY(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, cfg.device));
  if (!cooperative) return cudaErrorNotSupported;
  void* args[] = {&in, &n, &slots, &out};
  return cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(reduce_cooperative<Block>), blocks, Block, args, 0,
                                     stream);
}

cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  auto* const slots = static_cast<unsigned long long*>(scratch.data);
  switch (cfg.block) {  // every block size the harness accepts, 1024 included
    case 32: return launch_grid<32>(in, n, out, slots, cfg, stream);
    case 64: return launch_grid<64>(in, n, out, slots, cfg, stream);
    case 128: return launch_grid<128>(in, n, out, slots, cfg, stream);
    case 256: return launch_grid<256>(in, n, out, slots, cfg, stream);
    case 512: return launch_grid<512>(in, n, out, slots, cfg, stream);
    case 1024: return launch_grid<1024>(in, n, out, slots, cfg, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern const reduce::Step kStep = {
    "07_cooperative_grid", "one cooperative launch, 16-byte loads", /*deterministic=*/true, /*uses_block=*/true,
    scratch_bytes, launch, /*needs_zeroed_scratch=*/true, /*default_block=*/512};

}  // namespace step07
