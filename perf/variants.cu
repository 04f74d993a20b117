// Experiments behind PERF_NOTES.md: variants of step 07's streaming loop and launch shape, timed like
// the harness does (L2 flushed before every run, events around the launch, median), beside CUB.
// Not part of the suite; built only as the target perf_variants. Sets of rows:
//   loop    the streaming loop: layout, load instruction, loads in flight, block size
//   finish  how the blocks' partial sums meet (grid.sync, flag slots), one tile per block, TMA bulk copies
//   flags   the flag-slot finish at two block sizes, with and without a cooperative launch, repeated
//   step07  step 07's own launcher at every block size, timed here rather than by the harness
//   claim   tiles claimed at run time from a counter, block 0 collecting the tiles' sums in order
//   ends    not GB/s: when each block of a grid ends, and how many tiles each SM streamed
//   perf_variants [loop|finish|flags|step07|claim|ends] [log2 n ...]   default: finish; sizes -1 (n = 0) 10 16 20 ... 30
// Needs sm_80 or newer; the TMA rows need sm_90 and are left out below it.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cub/device/device_reduce.cuh>
#include <cuda/atomic>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "device.cuh"
#include "input.hpp"

namespace cg = cooperative_groups;
using reduce::DeviceBuffer;

namespace step07 { extern const reduce::Step kStep; }

enum class Layout { grid_stride, block_tile };
enum class Load { plain, streaming, l2_256 };
enum class Finish { grid_sync, last_block, none, flags, flags_prefetch, flags_batched };
enum class Grid { resident, one_tile_per_block, claimed };

template <Load L>
__device__ float4 load4(const float4* p) {
  if constexpr (L == Load::streaming) {
    return __ldcs(p);
  } else if constexpr (L == Load::l2_256) {
    float4 r;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
        : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w) : "l"(p));
    return r;
  } else {
    return *p;
  }
}

__device__ unsigned g_done = 0;  // blocks finished, for Finish::last_block (reset by the last block)

// Set "ends": kernels instantiated with Rec = true write, per block, {start ns, end ns, SM, tiles read}
// to g_record (read at the kernel's start, off the critical path). Only that set uses them, so the
// timed rows of the other sets carry none of this.
__device__ unsigned long long* g_record = nullptr;

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ void record_block(unsigned long long* record, unsigned long long start, unsigned tiles) {
  if (record == nullptr || threadIdx.x != 0) return;
  unsigned sm;
  asm("mov.u32 %0, %%smid;" : "=r"(sm));
  unsigned long long* r = record + 4 * blockIdx.x;
  r[0] = start;
  r[1] = global_ns();
  r[2] = sm;
  r[3] = tiles;
}

template <unsigned Block>
__device__ float block_sum(const cg::thread_block& block, float v) {
  constexpr unsigned kWarps = Block / 32;
  __shared__ float warp_sums[kWarps];
  const auto warp = cg::tiled_partition<32>(block);
  v = cg::reduce(warp, v, cg::plus<float>());
  if constexpr (kWarps == 1) return v;
  if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = v;
  block.sync();
  if (warp.meta_group_rank() == 0)
    v = cg::reduce(warp, warp.thread_rank() < kWarps ? warp_sums[warp.thread_rank()] : 0.0f, cg::plus<float>());
  return v;
}

// Finish::flags: block b > 0 stores its partial and a "full" flag in one 64-bit word, slot[b]; block 0
// waits for each flag, adds the partials in slot order, and empties the slots for the next launch.
// One 8-byte store is single-copy atomic, so the value and its flag arrive together: no fence and no
// atomic counter. The slots must be zero before the first launch (the caller clears them once).
using Slot = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;
constexpr unsigned long long kFull = 1ull << 32;

// Called at the top of the kernel by flags_prefetch: block 0 pulls its slots' lines into L2 early,
// so its first polls do not wait for DRAM (the timed runs start with a flushed L2).
template <unsigned Block, Finish F>
__device__ void prefetch_slots(unsigned long long* slots) {
  if constexpr (F == Finish::flags_prefetch || F == Finish::flags_batched) {
    if (blockIdx.x == 0)
      for (unsigned b = threadIdx.x * 16; b < gridDim.x; b += Block * 16)  // 16 slots per 128-byte line
        asm volatile("prefetch.global.L2 [%0];" ::"l"(slots + b));
  }
}

// sum is the block's total in thread 0. Combines the blocks' sums into *out as F says.
template <unsigned Block, Finish F>
__device__ void finish(const cg::thread_block& block, float sum, float* partial, float* out) {
  if constexpr (F == Finish::none) {
    if (block.thread_rank() == 0) partial[blockIdx.x] = sum;
    return;
  } else if constexpr (F == Finish::flags_batched) {  // as step 07: each thread's slots read with all loads in flight
    auto* slots = reinterpret_cast<unsigned long long*>(partial);
    if (blockIdx.x != 0) {
      if (block.thread_rank() == 0) Slot(slots[blockIdx.x]).store(kFull | __float_as_uint(sum), cuda::memory_order_relaxed);
      return;
    }
    constexpr unsigned kBatch = 8;
    float v = block.thread_rank() == 0 ? sum : 0.0f;
    for (unsigned first = threadIdx.x; first < gridDim.x; first += kBatch * Block) {
      unsigned long long w[kBatch];
#pragma unroll
      for (unsigned k = 0; k < kBatch; ++k) {
        const unsigned b = first + k * Block;
        w[k] = b != 0 && b < gridDim.x ? Slot(slots[b]).load(cuda::memory_order_relaxed) : kFull;
      }
#pragma unroll
      for (unsigned k = 0; k < kBatch; ++k) {
        const unsigned b = first + k * Block;
        if (b == 0 || b >= gridDim.x) continue;
        while (!(w[k] & kFull)) w[k] = Slot(slots[b]).load(cuda::memory_order_relaxed);
        v += __uint_as_float(static_cast<unsigned>(w[k]));
        Slot(slots[b]).store(0, cuda::memory_order_relaxed);
      }
    }
    block.sync();
    v = block_sum<Block>(block, v);
    if (block.thread_rank() == 0) *out = v;
    return;
  } else if constexpr (F == Finish::flags || F == Finish::flags_prefetch) {
    auto* slots = reinterpret_cast<unsigned long long*>(partial);
    if (blockIdx.x != 0) {
      if (block.thread_rank() == 0) Slot(slots[blockIdx.x]).store(kFull | __float_as_uint(sum), cuda::memory_order_relaxed);
      return;
    }
    float v = block.thread_rank() == 0 ? sum : 0.0f;
    for (unsigned b = block.thread_rank(); b < gridDim.x; b += Block) {
      if (b == 0) continue;
      unsigned long long w;
      while (!((w = Slot(slots[b]).load(cuda::memory_order_relaxed)) & kFull)) {
      }
      v += __uint_as_float(static_cast<unsigned>(w));
      Slot(slots[b]).store(0, cuda::memory_order_relaxed);
    }
    v = block_sum<Block>(block, v);
    if (block.thread_rank() == 0) *out = v;
    return;
  } else {
    if constexpr (F == Finish::grid_sync) {
      if (block.thread_rank() == 0) partial[blockIdx.x] = sum;
      cg::this_grid().sync();
      if (blockIdx.x != 0) return;
    } else {
      __shared__ bool last;
      if (block.thread_rank() == 0) {
        partial[blockIdx.x] = sum;
        __threadfence();  // the partial is visible before the count says so
        last = atomicAdd(&g_done, 1u) == gridDim.x - 1;
      }
      block.sync();
      if (!last) return;
      __threadfence();
    }
    float v = 0.0f;
    for (unsigned b = block.thread_rank(); b < gridDim.x; b += Block) v += __ldcg(partial + b);
    v = block_sum<Block>(block, v);
    if (block.thread_rank() == 0) {
      *out = v;
      if constexpr (F == Finish::last_block) g_done = 0;
    }
  }
}

// n a multiple of 4 and in 16-byte aligned: the experiments measure the body only.
template <unsigned Block, int U, Layout Lay, Load L, Finish F, bool OneAcc = false, bool Rec = false>
__global__ void __launch_bounds__(Block) variant(const float* __restrict__ in, std::int64_t n, float* partial, float* out) {
  const auto grid = cg::this_grid();
  const auto block = cg::this_thread_block();
  const unsigned long long start = Rec ? global_ns() : 0;
  unsigned long long* const record = Rec ? g_record : nullptr;
  unsigned tiles = 0;  // rounds of the block-tile loop, for the record
  prefetch_slots<Block, F>(reinterpret_cast<unsigned long long*>(partial));
  const float4* body = reinterpret_cast<const float4*>(in);
  const std::int64_t vectors = n / 4;
  float acc[U] = {};
  if constexpr (Lay == Layout::grid_stride) {
    const std::int64_t threads = grid.num_threads();
    std::int64_t v = grid.thread_rank();
    for (; v + (U - 1) * threads < vectors; v += U * threads) {
      float4 x[U];
#pragma unroll
      for (int k = 0; k < U; ++k) x[k] = load4<L>(body + v + k * threads);
#pragma unroll
      for (int k = 0; k < U; ++k) acc[OneAcc ? 0 : k] += (x[k].x + x[k].y) + (x[k].z + x[k].w);
    }
    for (; v < vectors; v += threads) {
      const float4 x = load4<L>(body + v);
      acc[0] += (x.x + x.y) + (x.z + x.w);
    }
  } else {
    constexpr std::int64_t kTile = std::int64_t{Block} * U;  // vectors per block per round
    const std::int64_t step = kTile * gridDim.x;
    std::int64_t base = blockIdx.x * kTile;
    for (; base + kTile <= vectors; base += step, ++tiles) {
      float4 x[U];
#pragma unroll
      for (int k = 0; k < U; ++k) x[k] = load4<L>(body + base + k * Block + threadIdx.x);
#pragma unroll
      for (int k = 0; k < U; ++k) acc[OneAcc ? 0 : k] += (x[k].x + x[k].y) + (x[k].z + x[k].w);
    }
    for (std::int64_t v = base + threadIdx.x; v < vectors && v < base + kTile; v += Block) {
      const float4 x = load4<L>(body + v);
      acc[0] += (x.x + x.y) + (x.z + x.w);
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < U; ++k) sum += acc[k];
  const float block_total = block_sum<Block>(block, sum);
  record_block(record, start, tiles);
  finish<Block, F>(block, block_total, partial, out);
}

// TMA: thread 0 of each block streams its chunks of kStageBytes into a ring of Stages shared-memory
// buffers with cp.async.bulk (one instruction per chunk; the copy engine signals an mbarrier when
// the bytes have landed); all threads add each buffer once it is full, then thread 0 refills it.
// Chunks are dealt round-robin over the blocks like the tiles above; the rest after the last whole
// chunk is read with plain loads by every thread of the grid.
__device__ unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

template <unsigned Block, int Stages, int StageBytes, Finish F>
__global__ void __launch_bounds__(Block) bulk_variant(const float* __restrict__ in, std::int64_t n, float* partial,
                                                      float* out) {
#if __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) float4 ring[];  // Stages x StageBytes
  __shared__ __align__(8) unsigned long long full[Stages];
  constexpr int kVec = StageBytes / 16;
  const auto block = cg::this_thread_block();
  prefetch_slots<Block, F>(reinterpret_cast<unsigned long long*>(partial));
  const std::int64_t chunks = n * 4 / StageBytes;
  const std::int64_t mine = chunks > blockIdx.x ? (chunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  auto issue = [&](std::int64_t i) {  // thread 0: copy this block's chunk i into stage i % Stages
    const int s = static_cast<int>(i % Stages);
    const char* src = reinterpret_cast<const char*>(in) + (blockIdx.x + i * gridDim.x) * std::int64_t{StageBytes};
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&full[s])), "r"(StageBytes)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_addr(ring + s * kVec)),
                 "l"(src), "r"(StageBytes), "r"(smem_addr(&full[s]))
                 : "memory");
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < Stages; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[s])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    for (std::int64_t i = 0; i < Stages && i < mine; ++i) issue(i);
  }
  block.sync();
  float sum = 0.0f;
  for (std::int64_t i = 0; i < mine; ++i) {
    const int s = static_cast<int>(i % Stages);
    const unsigned parity = static_cast<unsigned>((i / Stages) & 1);
    unsigned done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(smem_addr(&full[s])), "r"(parity) : "memory");
#pragma unroll
    for (int k = threadIdx.x; k < kVec; k += Block) {
      const float4 x = ring[s * kVec + k];
      sum += (x.x + x.y) + (x.z + x.w);
    }
    block.sync();  // every thread is done with stage s
    if (threadIdx.x == 0 && i + Stages < mine) issue(i + Stages);
  }
  const float4* body = reinterpret_cast<const float4*>(in);
  for (std::int64_t v = chunks * kVec + blockIdx.x * std::int64_t{Block} + threadIdx.x; v < n / 4;
       v += std::int64_t{Block} * gridDim.x) {
    const float4 x = body[v];
    sum += (x.x + x.y) + (x.z + x.w);
  }
  finish<Block, F>(block, block_sum<Block>(block, sum), partial, out);
#endif
}

// Set "claim": tiles handed out at run time. Block 0 streams nothing: it collects. Every other block
// claims tile numbers from a counter (thread 0 claims the next tile while the block's loads for the
// current one are in flight), reduces each tile and stores its sum with a "full" flag in that tile's
// 8-byte slot. Block 0 reads the slots in tile order, kBatch per thread in flight, so the result is
// the same bits whichever block took which tile. Scratch: the counter in word 0, slots from byte 128.
// The counter needs no reset: there are exactly tiles + (gridDim.x - 1) claims (each streaming block
// stops at its first claim past the end), and atomicInc with that count minus one wraps it back to 0
// on the last one. Collect = false: block 0 returns at once (timing only; no sum).
template <unsigned Block, int U, bool Collect, bool Rec = false>
__global__ void __launch_bounds__(Block) claimed(const float* __restrict__ in, std::int64_t n, float* scratch,
                                                 float* out) {
  constexpr std::int64_t kTile = std::int64_t{Block} * U;
  constexpr unsigned kWarps = Block / 32;
  constexpr int kBatch = 8;
  const unsigned long long start = Rec ? global_ns() : 0;
  unsigned long long* const record = Rec ? g_record : nullptr;
  auto* counter = reinterpret_cast<unsigned*>(scratch);
  auto* slots = reinterpret_cast<unsigned long long*>(scratch) + 16;
  const auto block = cg::this_thread_block();
  const auto warp = cg::tiled_partition<32>(block);
  const float4* body = reinterpret_cast<const float4*>(in);
  const std::int64_t vectors = n / 4;
  const unsigned tiles = static_cast<unsigned>(vectors / kTile);

  if (blockIdx.x == 0) {
    if constexpr (Collect) {
      float v = 0.0f;
      for (std::int64_t i = std::int64_t{tiles} * kTile + threadIdx.x; i < vectors; i += Block) {  // the cut-off rest
        const float4 x = load4<Load::l2_256>(body + i);
        v += (x.x + x.y) + (x.z + x.w);
      }
      for (unsigned first = threadIdx.x; first < tiles; first += kBatch * Block) {
        unsigned long long w[kBatch];
#pragma unroll
        for (int k = 0; k < kBatch; ++k) {
          const unsigned t = first + k * Block;
          w[k] = t < tiles ? Slot(slots[t]).load(cuda::memory_order_relaxed) : kFull;
        }
#pragma unroll
        for (int k = 0; k < kBatch; ++k) {
          const unsigned t = first + k * Block;
          if (t >= tiles) continue;
          while (!(w[k] & kFull)) w[k] = Slot(slots[t]).load(cuda::memory_order_relaxed);
          v += __uint_as_float(static_cast<unsigned>(w[k]));
          Slot(slots[t]).store(0, cuda::memory_order_relaxed);
        }
      }
      v = block_sum<Block>(block, v);
      if (threadIdx.x == 0) *out = v;
    }
    return;
  }

  __shared__ unsigned claim[2];
  __shared__ float warp_sums[2][kWarps];
  const unsigned last_claim = tiles + gridDim.x - 2;  // claims are numbered 0 .. tiles + streaming blocks - 1
  if (threadIdx.x == 0) claim[0] = atomicInc(counter, last_claim);
  block.sync();
  unsigned t = claim[0], done = 0;
  for (int i = 0; t < tiles; ++i, ++done) {
    const int p = i & 1;
    float4 x[U];
#pragma unroll
    for (int k = 0; k < U; ++k) x[k] = load4<Load::l2_256>(body + t * kTile + k * Block + threadIdx.x);
    if (threadIdx.x == 0) claim[p ^ 1] = atomicInc(counter, last_claim);  // the next tile, while these load
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < U; ++k) s += (x[k].x + x[k].y) + (x[k].z + x[k].w);
    s = cg::reduce(warp, s, cg::plus<float>());
    if (warp.thread_rank() == 0) warp_sums[p][warp.meta_group_rank()] = s;
    block.sync();  // also publishes claim[p ^ 1]
    if (warp.meta_group_rank() == 0) {
      s = cg::reduce(warp, warp.thread_rank() < kWarps ? warp_sums[p][warp.thread_rank()] : 0.0f, cg::plus<float>());
      if (warp.thread_rank() == 0) Slot(slots[t]).store(kFull | __float_as_uint(s), cuda::memory_order_relaxed);
    }
    t = claim[p ^ 1];
  }
  record_block(record, start, done);
}

struct Variant {
  std::string name;
  void (*kernel)(const float*, std::int64_t, float*, float*);
  unsigned block;
  int per_block_vectors;  // float4s one block reads per round: the grid never has more blocks than rounds' worth
  bool cooperative;
  int blocks_per_sm;      // 0: as many as the occupancy API allows
  Grid grid = Grid::resident;
  int smem = 0;           // dynamic shared memory per block
  int min_cc = 80;
};

template <unsigned Block, int U, Layout Lay, Load L, Finish F = Finish::grid_sync, bool OneAcc = false,
          bool Rec = false>
Variant make(const char* name, int blocks_per_sm = 0, Grid grid = Grid::resident, bool cooperative = false) {
  return {name, variant<Block, U, Lay, L, F, OneAcc, Rec>, Block, static_cast<int>(Block * U), cooperative || F == Finish::grid_sync,
          blocks_per_sm, grid};
}

template <unsigned Block, int U, bool Collect, bool Rec = false>
Variant make_claimed(const char* name) {
  return {name, claimed<Block, U, Collect, Rec>, Block, static_cast<int>(Block * U), true, 0, Grid::claimed};
}

template <unsigned Block, int Stages, int StageBytes, Finish F>
Variant make_bulk(const char* name) {
  return {name, bulk_variant<Block, Stages, StageBytes, F>, Block, StageBytes / 16, false, 0, Grid::resident,
          Stages * StageBytes, 90};
}

int main(int argc, char** argv) {
  std::string set = "finish";
  std::vector<int> logs;
  for (int i = 1; i < argc; ++i) {
    if (std::isdigit(static_cast<unsigned char>(argv[i][0])) || argv[i][0] == '-') logs.push_back(std::atoi(argv[i]));
    else set = argv[i];
  }
  if (logs.empty()) logs = {-1, 10, 16, 20, 21, 22, 23, 24, 26, 28, 30};  // -1: n = 0, launch and finish only
  const reduce::DeviceInfo dev = reduce::open_device(0);
  std::vector<Variant> variants;
  if (set == "loop") {
    variants = {
        make<256, 4, Layout::grid_stride, Load::plain>("07 v1: 256 thr, grid-stride, 4 loads"),
        make<512, 4, Layout::block_tile, Load::plain>("512 thr, block tile, 4 loads"),
        make<512, 4, Layout::block_tile, Load::l2_256>("512 thr, tile, 4, .nc L2::256B"),
        make<512, 8, Layout::block_tile, Load::l2_256>("512 thr, tile, 8, .nc L2::256B"),
        make<1024, 4, Layout::block_tile, Load::l2_256>("1024 thr x1/SM, tile, 4, L2::256B", 1),
        make<512, 4, Layout::block_tile, Load::l2_256>("512 thr x2/SM, tile, 4, L2::256B", 2),
        make<512, 4, Layout::block_tile, Load::l2_256, Finish::last_block>("512, tile, 4, 256B, last-block finish"),
        make<512, 4, Layout::block_tile, Load::l2_256, Finish::none>("512, tile, 4, 256B, no finish (timing)"),
        make<256, 4, Layout::block_tile, Load::l2_256, Finish::last_block>("256, tile, 4, 256B, last-block finish"),
    };
  } else if (set == "finish") {
    variants = {
        make<256, 4, Layout::block_tile, Load::l2_256>("07 now: 256, tile, 4, 256B, grid.sync"),
        make<256, 4, Layout::block_tile, Load::l2_256, Finish::none>("same, no finish (timing only)"),
        make<256, 4, Layout::block_tile, Load::l2_256, Finish::flags>("same, flag slots"),
        make<256, 4, Layout::block_tile, Load::l2_256, Finish::flags_prefetch>("same, flag slots + prefetch"),
        make<512, 4, Layout::block_tile, Load::l2_256, Finish::flags_prefetch>("512, flag slots + prefetch"),
        make<1024, 4, Layout::block_tile, Load::l2_256, Finish::flags_prefetch>("1024 x1/SM, flag slots + prefetch", 1),
        make<256, 8, Layout::block_tile, Load::l2_256, Finish::none>("256x8 one tile/block, no finish", 0,
                                                                     Grid::one_tile_per_block),
        make<512, 8, Layout::block_tile, Load::l2_256, Finish::none>("512x8 one tile/block, no finish", 0,
                                                                     Grid::one_tile_per_block),
        make_bulk<256, 4, 16384, Finish::none>("TMA 256 thr, 4 x 16 KB, no finish"),
        make_bulk<256, 4, 16384, Finish::flags_prefetch>("TMA 256 thr, 4 x 16 KB, flag slots"),
        make_bulk<512, 4, 32768, Finish::none>("TMA 512 thr, 4 x 32 KB, no finish"),
    };
  } else if (set == "flags") {
    variants = {
        make<256, 4, Layout::block_tile, Load::l2_256, Finish::flags_prefetch>("256x4, flag slots + prefetch"),
        make<256, 4, Layout::block_tile, Load::l2_256, Finish::flags_prefetch>("256x4, flag slots + prefetch, coop", 0,
                                                                               Grid::resident, true),
        make<256, 8, Layout::block_tile, Load::l2_256, Finish::flags_prefetch>("256x8, flag slots + prefetch"),
        make<512, 4, Layout::block_tile, Load::l2_256, Finish::flags_prefetch>("512x4, flag slots + prefetch"),
        make<256, 8, Layout::block_tile, Load::l2_256, Finish::flags_prefetch>("256x8 one tile/block, flag slots", 0,
                                                                               Grid::one_tile_per_block),
        make<256, 8, Layout::block_tile, Load::l2_256, Finish::none>("256x8 one tile/block, no finish", 0,
                                                                     Grid::one_tile_per_block),
    };
  } else if (set == "step07") {  // beside the launcher's rows below
    variants = {
        make<256, 4, Layout::block_tile, Load::l2_256, Finish::flags_prefetch>("256x4, flag slots + prefetch, coop", 0,
                                                                               Grid::resident, true),
        make<512, 4, Layout::block_tile, Load::l2_256, Finish::flags_prefetch>("512x4, flag slots + prefetch, coop", 0,
                                                                               Grid::resident, true),
        make<256, 4, Layout::block_tile, Load::l2_256, Finish::flags_batched>("256x4, batched polls, coop", 0,
                                                                              Grid::resident, true),
        make<256, 4, Layout::block_tile, Load::l2_256, Finish::flags_prefetch, true>("256x4, one accumulator, coop", 0,
                                                                                     Grid::resident, true),
    };
  } else if (set == "claim") {  // tiles claimed at run time, beside the static tiles and step 07 (rows below)
    variants = {
        make<256, 4, Layout::block_tile, Load::l2_256, Finish::flags_prefetch>("static 256x4, flag slots, coop", 0,
                                                                               Grid::resident, true),
        make<256, 4, Layout::block_tile, Load::l2_256, Finish::none>("static 256x4, no finish"),
        make_claimed<256, 4, false>("claimed 256x4, no collection"),
        make_claimed<256, 4, true>("claimed 256x4, block 0 collects"),
        make_claimed<512, 4, true>("claimed 512x4, block 0 collects"),
        make_claimed<256, 8, false>("claimed 256x8, no collection"),
        make_claimed<256, 8, true>("claimed 256x8, block 0 collects"),
        make<256, 8, Layout::block_tile, Load::l2_256, Finish::none>("256x8 one tile/block, no finish", 0,
                                                                     Grid::one_tile_per_block),
    };
  } else if (set == "ends") {  // when each block ends, and how much each SM did (not GB/s)
    variants = {
        make<256, 4, Layout::block_tile, Load::l2_256, Finish::none, false, true>("static 256x4, no finish"),
        make_claimed<256, 4, false, true>("claimed 256x4, no collection"),
        make<256, 8, Layout::block_tile, Load::l2_256, Finish::none, false, true>("256x8 one tile/block, no finish", 0,
                                                                                  Grid::one_tile_per_block),
    };
  } else {
    std::fprintf(stderr, "perf_variants: unknown set '%s' (loop, finish, flags, step07, claim or ends)\n",
                 set.c_str());
    return 2;
  }
  const std::int64_t max_n = std::int64_t{1} << *std::max_element(logs.begin(), logs.end());
  if (set != "ends")
    std::printf("set %s; GB/s; the n=0 column (log2 n = -1) is microseconds per launch; ! marks a wrong sum\n",
                set.c_str());
  std::vector<float> host(max_n);
  reduce::fill_input(host.data(), max_n, reduce::Pattern::uniform, 1);
  // Partial sums: one float per block, or one 8-byte slot for the flag finish; a one-tile-per-block
  // grid has up to max_n / 1024 blocks. Zero once: the flag finish leaves its slots zero.
  const std::size_t partial_floats = 2 * (32 * static_cast<std::size_t>(dev.sm_count) + max_n / 1024);
  DeviceBuffer<float> in(max_n), out(1), partial(partial_floats);
  CUDA_CHECK(cudaMemcpy(in.get(), host.data(), max_n * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(partial.get(), 0, partial.bytes()));
  reduce::L2Flusher flusher(dev);
  reduce::Stream stream;
  std::size_t cub_bytes = 0;
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cub_bytes, in.get(), out.get(), max_n));
  DeviceBuffer<unsigned char> cub_tmp(cub_bytes);
  const int iters = 30;

  auto time = [&](auto&& launch) {
    std::vector<reduce::Event> a(iters), b(iters);
    for (int i = 0; i < 3; ++i) launch();
    for (int i = 0; i < iters; ++i) {
      flusher.flush(stream.get());
      CUDA_CHECK(cudaEventRecord(a[i].get(), stream.get()));
      launch();
      CUDA_CHECK(cudaEventRecord(b[i].get(), stream.get()));
    }
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    std::vector<double> ms;
    for (int i = 0; i < iters; ++i) {
      float t;
      CUDA_CHECK(cudaEventElapsedTime(&t, a[i].get(), b[i].get()));
      ms.push_back(t);
    }
    return reduce::summarize(ms).median;
  };

  // One cell of a row: time launch() at n, then check the sum it left in out (NaN before each row's
  // first run, so a variant that writes no sum shows "!").
  auto print_cell = [&](std::int64_t n, auto&& launch) {
    CUDA_CHECK(cudaMemset(out.get(), 0xFF, sizeof(float)));
    const double ms = time(launch);
    float got;
    CUDA_CHECK(cudaMemcpy(&got, out.get(), 4, cudaMemcpyDeviceToHost));
    const double ref = reduce::reference_sum(host.data(), n).sum;
    if (n == 0) std::printf("%7.2fus", ms * 1e3);
    else std::printf("%8.0f%s", n * 4 / ms / 1e6, !(std::abs(got - ref) <= 1e-3 * ref) ? "!" : " ");
  };

  // Set "ends": three launches after a flush with g_record set; per run: the kernel's span (first
  // block start to last block end), how long before that end the blocks finished (median and 90th
  // percentile of the gaps) and the per-SM spread: latest block end per SM (earliest SM's gap to the
  // end) and tiles read per SM (min / max: equal shares, or what the SMs took for themselves).
  auto print_ends = [&](std::int64_t n, int blocks, auto&& launch) {
    DeviceBuffer<unsigned long long> rec(4 * static_cast<std::size_t>(blocks));
    unsigned long long* p = rec.get();
    CUDA_CHECK(cudaMemcpyToSymbol(g_record, &p, sizeof(p)));
    for (int run = 0; run < 3; ++run) {
      CUDA_CHECK(cudaMemset(rec.get(), 0, rec.bytes()));  // a block that records nothing stays 0
      flusher.flush(stream.get());
      launch();
      CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      std::vector<unsigned long long> r(rec.size());
      CUDA_CHECK(cudaMemcpy(r.data(), rec.get(), rec.bytes(), cudaMemcpyDeviceToHost));
      unsigned long long first = ~0ull, last = 0;
      for (int b = 0; b < blocks; ++b)
        if (r[4 * b + 1] != 0) first = std::min(first, r[4 * b]), last = std::max(last, r[4 * b + 1]);
      std::vector<double> gaps;
      std::vector<unsigned long long> sm_end(dev.sm_count, 0), sm_tiles(dev.sm_count, 0);
      for (int b = 0; b < blocks; ++b) {
        if (r[4 * b + 1] == 0) continue;  // a block that records nothing (block 0 of the claimed kernel)
        gaps.push_back((last - r[4 * b + 1]) * 1e-3);
        const auto sm = static_cast<std::size_t>(r[4 * b + 2]) % sm_end.size();
        sm_end[sm] = std::max(sm_end[sm], r[4 * b + 1]);
        sm_tiles[sm] += r[4 * b + 3];
      }
      if (gaps.empty()) {
        std::printf("\n  n=%lld run %d: no block recorded", static_cast<long long>(n), run);
        continue;
      }
      std::sort(gaps.begin(), gaps.end());
      const auto earliest_sm = *std::min_element(sm_end.begin(), sm_end.end());
      const auto [tmin, tmax] = std::minmax_element(sm_tiles.begin(), sm_tiles.end());
      std::printf("\n  n=2^%d run %d: span %.1f us; blocks end before the last by median %.2f us, p90 %.2f us; "
                  "earliest SM done %.2f us before the end; ",
                  static_cast<int>(std::log2(static_cast<double>(n))), run, (last - first) * 1e-3,
                  gaps[gaps.size() / 2], gaps[gaps.size() * 9 / 10], (last - earliest_sm) * 1e-3);
      std::printf("tiles per SM %llu..%llu", *tmin, *tmax);
    }
    unsigned long long* none = nullptr;
    CUDA_CHECK(cudaMemcpyToSymbol(g_record, &none, sizeof(none)));
  };

  if (set == "ends") {
    std::printf("set ends; per block: start and end (globaltimer), SM, tiles read; three runs per size, each after "
                "an L2 flush\n");
  } else {
    std::printf("%-44s", "GB/s (median of 30, cold L2)  log2 n:");
    for (int k : logs) std::printf("%9d", k);
    std::printf("\n");
  }
  for (const Variant& v : variants) {
    if (dev.cc_major * 10 + dev.cc_minor < v.min_cc) continue;
    if (v.smem > 48 * 1024)
      CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(v.kernel),
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, v.smem));
    std::printf("%-44s", v.name.c_str());
    for (int k : logs) {
      std::int64_t n = k < 0 ? 0 : std::int64_t{1} << k;
      int per_sm = v.blocks_per_sm;
      if (!per_sm) CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.kernel, v.block, v.smem));
      const std::int64_t rounds = std::max<std::int64_t>(1, n / 4 / v.per_block_vectors);
      const std::int64_t resident = std::int64_t{per_sm} * dev.sm_count;
      const int blocks = static_cast<int>(v.grid == Grid::one_tile_per_block ? rounds
                                          : v.grid == Grid::claimed
                                              ? std::min(resident, n / 4 / v.per_block_vectors + 1)
                                              : std::min(resident, rounds));
      const float* inp = in.get();
      float* part = partial.get();
      float* o = out.get();
      void* args[] = {&inp, &n, &part, &o};
      auto launch = [&] {
        if (v.cooperative)
          CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(v.kernel), blocks, v.block, args, 0,
                                                 stream.get()));
        else
          CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(v.kernel), blocks, v.block, args, v.smem,
                                      stream.get()));
      };
      CUDA_CHECK(cudaMemset(partial.get(), 0, partial.bytes()));  // counters and slots start empty
      if (set == "ends") print_ends(n, blocks, launch);
      else print_cell(n, launch);
    }
    std::printf("\n");
  }
  if (set == "step07" || set == "claim") {
    const reduce::Step& step = step07::kStep;
    for (int block : set == "claim" ? std::vector<int>{256, 512} : std::vector<int>{128, 256, 512, 1024}) {
      const reduce::LaunchConfig cfg{block, dev.ordinal, dev.sm_count};
      std::size_t bytes = 0;
      for (int k : logs) bytes = std::max(bytes, step.scratch_bytes(k < 0 ? 0 : std::int64_t{1} << k, cfg));
      DeviceBuffer<unsigned char> scratch(bytes);
      CUDA_CHECK(cudaMemset(scratch.get(), 0, scratch.bytes()));
      std::printf("%-44s", (std::string(step.name) + " launcher, block " + std::to_string(block)).c_str());
      for (int k : logs) {
        const std::int64_t n = k < 0 ? 0 : std::int64_t{1} << k;
        print_cell(n, [&] {
          CUDA_CHECK(step.launch(in.get(), n, out.get(), reduce::Scratch{scratch.get(), scratch.bytes()}, cfg,
                                 stream.get()));
        });
      }
      std::printf("\n");
    }
  }
  if (set == "ends") return 0;
  std::printf("%-44s", "cub::DeviceReduce::Sum");
  for (int k : logs) {
    const std::int64_t n = k < 0 ? 0 : std::int64_t{1} << k;
    std::size_t bytes = cub_bytes;
    const double ms = time([&] { CUDA_CHECK(cub::DeviceReduce::Sum(cub_tmp.get(), bytes, in.get(), out.get(), n, stream.get())); });
    if (n == 0) std::printf("%7.2fus", ms * 1e3);
    else std::printf("%8.0f ", n * 4 / ms / 1e6);
  }
  std::printf("\n");
  return 0;
}
