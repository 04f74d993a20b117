// Step 15: the same bits on any GPU.
//
// What it shows: steps 05-10 and CUB give the same result run after run on one GPU, but not the same
// result on another GPU, nor with another block size. Floating-point addition is not associative,
// and their grouping follows the launch: thread t adds elements t, t + T, ... (T threads in all), a
// block adds its threads, block 0 its blocks, and T comes from the SM count and the occupancy. Here
// the grouping is fixed by the input alone (order.hpp): tiles of a size that depends on n only, each
// summed by one warp in a fixed order (so the block size cannot matter), the tile sums combined in a
// fixed tree over fixed columns (so the grid cannot matter). The grid only decides which warp
// computes which tile. The loads are step 10's: four float4s in flight per lane, contiguous per warp,
// at step 10's occupancy (launch bounds hold the kernel to 32 registers a thread), and a warp issues
// its next tile's loads before it shuffles the current tile's sum.
// What changed from step 10: a warp, not a block, owns a piece of the input, and owns it by its index
// in the array rather than by its place in the grid; a warp hands over one float per tile instead of a
// block one per block. The hand-over is step 08's: each tile sum goes to a flagged slot, and block 0,
// which reads no tiles, adds them into the fixed tree while the other blocks are still reading (a
// cooperative launch, so that every block is resident). A grid too large to be resident at once takes
// a device-scope counter instead, and the last block to finish reads every tile sum (--finish counter
// measures the difference; both give the same bits).
// Misaligned inputs take scalar loads in the same order, so their bits equal an aligned copy's.
// The same two halves, summing tiles and combining their sums, are the multi-GPU API below: tiles
// summed on several GPUs and combined in the same tree give the same bits (14_multi_gpu/reproducible.cuh).
// Usage: ./15_reproducible [--n 2^26] [--grid 132] [--block 512] [--finish flags|counter] [--help]
#include <cuda/atomic>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "agent.cuh"
#include "reproducible.cuh"

namespace repro {
namespace {

using reduce::agent::Plus;
using reduce::agent::warp_reduce;

__device__ float4 operator+(float4 a, float4 b) { return {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w}; }

// A lane's kLoads float4s of one round in the order's tree, then a float4 to one float.
__device__ float4 round_tree(const float4 (&x)[kLoads]) {
  static_assert(kLoads == 4, "the tree below is written for 4 loads");
  return (x[0] + x[1]) + (x[2] + x[3]);
}
__device__ float lane_total(float4 a) { return (a.x + a.y) + (a.z + a.w); }

// Round r of a tile on the aligned path: float4s r * 32 * kLoads + k * 32 + lane, one 16-byte load each.
__device__ void load_round(const float4* lane_first, int r, float4 (&x)[kLoads]) {
#pragma unroll
  for (int k = 0; k < kLoads; ++k) x[k] = lane_first[r * 32 * kLoads + k * 32];
}

// The same float4s as four 4-byte loads, elements at or past `left` (the input's end) read as +0:
// misaligned inputs and the last tile.
__device__ void load_round_scalar(const float* tile, std::int64_t left, int r, unsigned lane, float4 (&x)[kLoads]) {
#pragma unroll
  for (int k = 0; k < kLoads; ++k) {
    const std::int64_t i = 4 * (std::int64_t{r} * 32 * kLoads + k * 32 + lane);
    x[k] = {i < left ? tile[i] : 0.0f, i + 1 < left ? tile[i + 1] : 0.0f, i + 2 < left ? tile[i + 2] : 0.0f,
            i + 3 < left ? tile[i + 3] : 0.0f};
  }
}

// Where a warp's tile sums go: store(t, s) puts tile t's sum s where the finish will read it.
// PlainSums: a float per tile, read after the counter says every block is done (and by 14's shards).
struct PlainSums {
  float* sums;
  __device__ void operator()(unsigned t, float s) const { sums[t] = s; }
};

// Tiles t, t + stride, ... < tiles of in[0..n) (tiles of 2^lg elements) with scalar loads, each summed
// by the calling warp and handed to store: the last, cut tile, and every tile of a misaligned input.
// Not inlined, so that its registers do not count against the hot loop's.
template <typename Store>
__device__ __noinline__ void sum_tiles_scalar(const float* in, std::int64_t n, int lg, unsigned tiles, unsigned t,
                                              unsigned stride, Store store) {
  const unsigned lane = threadIdx.x % 32;
  const int rounds = 1 << (lg - kMinLog2Tile);
  for (; t < tiles; t += stride) {
    const std::int64_t start = std::int64_t{t} << lg;
    float4 x[kLoads];
    load_round_scalar(in + start, n - start, 0, lane, x);
    float4 acc = round_tree(x);
    for (int r = 1; r < rounds; ++r) {
      load_round_scalar(in + start, n - start, r, lane, x);
      acc = acc + round_tree(x);
    }
    const float s = warp_reduce(lane_total(acc), Plus{});
    if (lane == 0) store(t, s);
  }
}

// What the kernels need to know about the tiling of their input, computed once on the host (kernel
// parameters live in constant memory, not in registers): n elements in tiles of 2^lg, `whole` of them
// read with 16-byte loads (0 when the input is misaligned), the rest with scalar loads.
struct Tiling {
  const float* in;
  std::int64_t n;
  int lg;
  unsigned tiles, whole;
};

// The tiles t = first, first + stride, ... < tiles, each summed by the calling warp and stored. Whole
// tiles of an aligned input take 16-byte loads, and the next tile's first round is loaded before the
// current tile's shuffle tree, so the warp's loads overlap its shuffles; the rest goes to
// sum_tiles_scalar.
template <typename Store>
__device__ __forceinline__ void sum_tiles(const Tiling& g, unsigned first, unsigned stride, Store store) {
  const unsigned lane = threadIdx.x % 32;
  const int rounds = 1 << (g.lg - kMinLog2Tile);
  const float4* const body = reinterpret_cast<const float4*>(g.in) + lane;
  unsigned t = first;
  if (t < g.whole) {
    float4 x[kLoads];
    load_round(body + (std::int64_t{t} << (g.lg - 2)), 0, x);
    for (;;) {
      const float4* const p = body + (std::int64_t{t} << (g.lg - 2));
      float4 acc = round_tree(x);
#pragma unroll 1  // kLoads loads in flight, as in step 10: unrolled, the rounds would need more registers
      for (int r = 1; r < rounds; ++r) {
        load_round(p, r, x);
        acc = acc + round_tree(x);
      }
      const float mine = lane_total(acc);
      const unsigned next = t + stride;
      // In flight during the shuffles. After the warp's last whole tile it reloads that tile (from L1
      // or L2, a few hundred bytes): a load on one path only would keep the old x alive beside the new.
      load_round(body + (std::int64_t{next < g.whole ? next : t} << (g.lg - 2)), 0, x);
      const float s = warp_reduce(mine, Plus{});
      if (lane == 0) store(t, s);
      if (next >= g.whole) break;
      t = next;
    }
    t += stride;
  }
  if (t < g.tiles) sum_tiles_scalar(g.in, g.n, g.lg, g.tiles, t, stride, store);
}

// The fixed tree over the tile sums (order.hpp), by a block of Block threads. Thread j owns columns
// j, j + Block, ...; it walks its (column, float4) pairs float4 by float4 across its columns,
// Load::kBatch loads at a time, and adds each float4 to its column's sum in shared memory (a column's
// float4s in order, from +0). Then warp w adds the groups of 32 columns w, w + Block / 32, ... (the shuffle tree)
// and warp 0 the group sums. Columns without a tile stay +0 (adding +0 to a sum that is never -0 changes
// no bit). load.batch(q, quads, v) sets v[b] to float4 q[b] of the sums for each q[b] < quads, all
// Load::kBatch of them loaded at once. The result is in thread 0.
static_assert(kColumns == 32 * 32, "the group sums go through one warp's shuffle tree");

template <unsigned Block, typename Load>
__device__ __noinline__ float combine_tree(const Load& load, unsigned tiles) {
  constexpr unsigned kGroups = kColumns / 32, kMine = kColumns > Block ? kColumns / Block : 1;
  __shared__ float4 column_sums[kColumns];
  __shared__ float group_sums[kGroups];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned quads = (tiles + 3) / 4;
  for (unsigned c = threadIdx.x; c < kColumns; c += Block) column_sums[c] = float4{0.0f, 0.0f, 0.0f, 0.0f};
  // Pair m of this thread: column threadIdx.x + (m % kMine) * Block, its float4 number m / kMine.
  const unsigned per_column = (quads + kColumns - 1) / kColumns, pairs = per_column * kMine;
  constexpr int kBatch = Load::kBatch;
  for (unsigned m0 = 0; m0 < pairs; m0 += kBatch) {
    unsigned q[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const unsigned m = m0 + b;
      q[b] = m < pairs ? threadIdx.x + (m % kMine) * Block + (m / kMine) * kColumns : quads;  // quads: none
    }
    float4 v[kBatch];
    load.batch(q, quads, v);
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const unsigned m = m0 + b, c = threadIdx.x + (m % kMine) * Block;
      if (q[b] < quads) column_sums[c] = column_sums[c] + v[b];
    }
  }
  __syncthreads();
  for (unsigned g = warp; g < kGroups; g += Block / 32) {
    const float s = warp_reduce(lane_total(column_sums[32 * g + lane]), Plus{});
    if (lane == 0) group_sums[g] = s;
  }
  __syncthreads();
  return warp == 0 ? warp_reduce(group_sums[lane], Plus{}) : 0.0f;
}

// The launch bounds ask for a full SM: all the threads an SM holds (2048 on sm_80 and sm_90, so at most
// 32 registers a thread, step 10's occupancy), in at most as many blocks as it holds. Per architecture
// compiled for, so that ptxas is never asked for more than the SM has.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
constexpr unsigned kThreadsPerSm = 1024, kBlocksPerSm = 16;
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870)
constexpr unsigned kThreadsPerSm = 1536, kBlocksPerSm = 16;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 890
constexpr unsigned kThreadsPerSm = 1536, kBlocksPerSm = 24;
#else
constexpr unsigned kThreadsPerSm = 2048, kBlocksPerSm = 32;
#endif
template <unsigned Block>
constexpr unsigned kMinBlocks = kThreadsPerSm / Block < kBlocksPerSm ? kThreadsPerSm / Block : kBlocksPerSm;

// The hand-over, as in step 08, one slot per tile: tile t's sum goes to a 64-bit slot, its bits in the
// low half and kFull in the high half, in one relaxed store, so the value and its flag arrive together
// and no fence is needed for them. Slots are zero (empty) between launches: the harness hands over
// zero-filled scratch, and the block that combines empties every slot it reads. The slots of float4 q
// of the tile sums (tiles 4q .. 4q + 3) lie `quads` apart, so the 32 lanes of a warp that read 32
// consecutive float4s read 256 contiguous bytes at a time.
using Slot = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;
constexpr unsigned long long kFull = 1ull << 32;

struct Slots {
  unsigned long long* at;
  unsigned quads;
  __device__ Slot operator[](unsigned t) const { return Slot(at[(t % 4) * quads + t / 4]); }
};

struct FlaggedSums {  // a warp's Store
  Slots slots;
  __device__ void operator()(unsigned t, float s) const {
    slots[t].store(kFull | __float_as_uint(s), cuda::memory_order_relaxed);
  }
};

// combine_tree's Load: float4s of the tile sums from their slots. The slots of a batch are loaded at
// once; a slot still empty (its warp has not finished the tile) is loaded again until it is full.
// Each slot is emptied once read. Tiles past the last read as +0. Two float4s a batch: eight 8-byte
// loads in flight, as many as the kernel's 32 registers a thread hold beside the rest.
struct CollectedSums {
  static constexpr int kBatch = 2;
  Slots slots;
  unsigned tiles;
  __device__ void batch(const unsigned (&q)[kBatch], unsigned quads, float4 (&v)[kBatch]) const {
    unsigned long long w[kBatch][4];
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const unsigned t = 4 * q[b] + i;
        w[b][i] = q[b] < quads && t < tiles ? slots[t].load(cuda::memory_order_relaxed) : kFull;
      }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      float x[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const unsigned t = 4 * q[b] + i;
        x[i] = 0.0f;
        if (q[b] >= quads || t >= tiles) continue;
        const Slot slot = slots[t];
        while (!(w[b][i] & kFull)) w[b][i] = slot.load(cuda::memory_order_relaxed);
        slot.store(0, cuda::memory_order_relaxed);
        x[i] = __uint_as_float(static_cast<unsigned>(w[b][i]));
      }
      v[b] = {x[0], x[1], x[2], x[3]};
    }
  }
};

// The flag finish. Blocks 1 .. gridDim.x - 1 sum the tiles (warp w of block b is reading warp
// w * (gridDim.x - 1) + b - 1) while block 0 adds the tile sums into the fixed tree as they arrive, so
// that when the last tile is summed only its few columns and the tree's last levels are left. Block 0
// waits for the others: the whole grid must be resident, so this kernel is launched cooperatively. A
// grid of one block sums its tiles, then combines them.
template <unsigned Block>
__global__ void __launch_bounds__(Block, kMinBlocks<Block>)
    reduce_reproducible_flags(const Tiling g, Slots slots, float* out) {
  if (gridDim.x == 1) {
    sum_tiles(g, threadIdx.x / 32, Block / 32, FlaggedSums{slots});
    __syncthreads();  // its own slots are full: the combination below waits for none
  } else if (blockIdx.x != 0) {
    const unsigned readers = gridDim.x - 1;
    sum_tiles(g, threadIdx.x / 32 * readers + blockIdx.x - 1, readers * (Block / 32), FlaggedSums{slots});
    return;
  }
  const float total = combine_tree<Block>(CollectedSums{slots, g.tiles}, g.tiles);
  if (threadIdx.x == 0) *out = total;
}

// The counter finish. Warp w of block b is global warp w * gridDim.x + b (blocks first, so that a
// small n spreads its few tiles over many SMs) and sums tiles g, g + warps, ...; the last block to
// finish combines the sums. Any grid: no block waits for another to start.
using Counter = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

template <unsigned Block>
__global__ void __launch_bounds__(Block, kMinBlocks<Block>)
    reduce_reproducible_counter(const Tiling g, Slots slots, unsigned* counter, float* out) {
  sum_tiles(g, threadIdx.x / 32 * gridDim.x + blockIdx.x, gridDim.x * (Block / 32), FlaggedSums{slots});

  // Every warp of the block has stored its sums (barrier), then one release-acquire counter: the
  // block that brings it to gridDim.x sees every block's sums (full slots: it waits for none) and
  // combines them.
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) last = Counter(*counter).fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  const float total = combine_tree<Block>(CollectedSums{slots, g.tiles}, g.tiles);
  if (threadIdx.x == 0) {
    *out = total;
    Counter(*counter).store(0, cuda::memory_order_relaxed);  // every block has counted: zero for the next launch
  }
}

// The multi-GPU halves: a shard's tiles into partials (no hand-over), and the tree over all partials.
template <unsigned Block>
__global__ void __launch_bounds__(Block, kMinBlocks<Block>)
    shard_tile_sums(const Tiling g, float* partials) {
  sum_tiles(g, threadIdx.x / 32 * gridDim.x + blockIdx.x, gridDim.x * (Block / 32), PlainSums{partials});
}

struct Partials {
  static constexpr int kBatch = kLoads;  // combine_tree's loads in flight
  const float* sums;
  unsigned tiles;
  __device__ void batch(const unsigned (&q)[kBatch], unsigned quads, float4 (&v)[kBatch]) const {
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const unsigned t = 4 * q[b];  // the partials need not be 16-byte aligned, nor padded
      if (q[b] < quads)
        v[b] = {sums[t], t + 1 < tiles ? sums[t + 1] : 0.0f, t + 2 < tiles ? sums[t + 2] : 0.0f,
                t + 3 < tiles ? sums[t + 3] : 0.0f};
    }
  }
};

constexpr unsigned kCombineBlock = 1024;
__global__ void __launch_bounds__(kCombineBlock) combine_partials(const float* partials, unsigned tiles, float* out) {
  const float total = combine_tree<kCombineBlock>(Partials{partials, tiles}, tiles);
  if (threadIdx.x == 0) *out = total;
}

constexpr std::size_t kCounterBytes = 16;  // keeps the slots behind it 16-byte aligned

// Scratch for n elements: the counter, then one 8-byte slot per tile, rounded up to whole float4s of
// tile sums (quads of them).
std::int64_t quads_of(std::int64_t n) { return (num_tiles(n) + 3) / 4; }
unsigned* counter_in(void* scratch) { return static_cast<unsigned*>(scratch); }
Slots slots_in(void* scratch, std::int64_t n) {
  return {reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(scratch) + kCounterBytes),
          static_cast<unsigned>(quads_of(n))};
}

// Resident blocks per SM of the finish's kernel. They do not change on this process's device: asked
// once for each kernel.
template <unsigned Block, Finish F>
cudaError_t blocks_per_sm(int* per_sm) {
  static std::atomic<int> cached{0};
  int v = cached.load();
  if (v == 0) {
    const void* kernel = F == Finish::flags ? reinterpret_cast<const void*>(reduce_reproducible_flags<Block>)
                                            : reinterpret_cast<const void*>(reduce_reproducible_counter<Block>);
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, kernel, Block, 0));
    cached.store(v);
  }
  *per_sm = v;
  return cudaSuccess;
}

// Blocks that fit on the device at once: the finish's resident blocks per SM times cfg.sm_count.
cudaError_t resident_blocks(const reduce::LaunchConfig& cfg, Finish finish, std::int64_t* blocks) {
  int per_sm = 0;
  CUDA_TRY(reduce::with_block_size(cfg.block, [&](auto block) {
    return finish == Finish::flags ? blocks_per_sm<block, Finish::flags>(&per_sm)
                                   : blocks_per_sm<block, Finish::counter>(&per_sm);
  }));
  *blocks = std::max<std::int64_t>(std::int64_t{per_sm} * (cfg.sm_count > 0 ? cfg.sm_count : 1), 1);
  return cudaSuccess;
}

// Blocks for `tiles` tiles: enough reading warps to give each warp one tile (plus block 0, which only
// collects, for the flag finish), at most the device-filling grid, at least one block. cfg.grid when
// the caller chose, unless its warps would overflow the kernels' 32-bit warp index (2^26 blocks of 32
// threads and more); then as many blocks as give every warp at most one tile, which changes who sums
// what, never the bits.
cudaError_t grid_for(std::int64_t tiles, const reduce::LaunchConfig& cfg, Finish finish, std::int64_t* grid) {
  if (cfg.grid > 0x7fffffff) return cudaErrorInvalidValue;
  if (cfg.grid > 0) {
    const bool fits = cfg.grid * (cfg.block / 32) <= 0x7fffffff;
    *grid = fits ? cfg.grid : std::max<std::int64_t>(1, reduce::ceil_div(tiles, cfg.block / 32));
    return cudaSuccess;
  }
  std::int64_t device = 0;
  CUDA_TRY(resident_blocks(cfg, finish, &device));
  const std::int64_t readers = reduce::ceil_div(tiles, cfg.block / 32);
  *grid = std::clamp<std::int64_t>(finish == Finish::flags ? readers + 1 : readers, 1, device);
  return cudaSuccess;
}

// The finish a launch takes: the flag finish where asked for, the device can launch cooperatively and
// the grid fits on it at once; else the counter.
cudaError_t choose(std::int64_t tiles, const reduce::LaunchConfig& cfg, Finish asked, Finish* used, std::int64_t* grid) {
  *used = Finish::counter;
  if (asked == Finish::flags) {
    int cooperative = 0;
    CUDA_TRY(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, cfg.device));
    std::int64_t device = 0, g = 0;
    CUDA_TRY(resident_blocks(cfg, Finish::flags, &device));
    CUDA_TRY(grid_for(tiles, cfg, Finish::flags, &g));
    if (cooperative && g <= device) *used = Finish::flags;
  }
  return grid_for(tiles, cfg, *used, grid);
}

// The tiling of in[0..n) in tiles of 2^lg elements.
Tiling tiling(const float* in, std::int64_t n, int lg) {
  const bool aligned = reinterpret_cast<std::uintptr_t>(in) % 16 == 0;
  return {in, n, lg, static_cast<unsigned>((n + (std::int64_t{1} << lg) - 1) >> lg),
          aligned ? static_cast<unsigned>(n >> lg) : 0u};
}

// Tile indices are 32-bit in the kernels: n up to reduce::max_n() gives at most 2^20 tiles.
bool tiles_fit(std::int64_t n) { return num_tiles(n) <= 0x7fffffff; }

template <unsigned Block>
cudaError_t launch_finish(Tiling g, Finish finish, std::int64_t grid, void* scratch, std::int64_t n, float* out,
                          cudaStream_t stream) {
  Slots slots = slots_in(scratch, n);
  if (finish == Finish::counter) {
    reduce_reproducible_counter<Block><<<static_cast<unsigned>(grid), Block, 0, stream>>>(g, slots, counter_in(scratch), out);
    return cudaGetLastError();
  }
  void* args[] = {&g, &slots, &out};
  return cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(reduce_reproducible_flags<Block>),
                                     static_cast<unsigned>(grid), Block, args, 0, stream);
}

}  // namespace

const char* to_string(Finish f) { return f == Finish::flags ? "flags" : "counter"; }

std::size_t scratch_bytes(std::int64_t n, const reduce::LaunchConfig&) {
  return kCounterBytes + static_cast<std::size_t>(quads_of(n)) * 4 * sizeof(unsigned long long);
}

cudaError_t finish_for(std::int64_t n, const reduce::LaunchConfig& cfg, Finish asked, Finish* used, std::int64_t* grid) {
  if (n < 0 || !tiles_fit(n)) return cudaErrorInvalidValue;
  return choose(num_tiles(n), cfg, asked, used, grid);
}

cudaError_t default_grid(std::int64_t n, const reduce::LaunchConfig& cfg, std::int64_t* grid) {
  reduce::LaunchConfig chosen = cfg;
  chosen.grid = 0;
  Finish used = Finish::flags;
  return finish_for(n, chosen, Finish::flags, &used, grid);
}

cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch, const reduce::LaunchConfig& cfg,
                   Finish finish, cudaStream_t stream) {
  if (n < 0 || !tiles_fit(n) || scratch.bytes < scratch_bytes(n, cfg)) return cudaErrorInvalidValue;
  Finish used = finish;
  std::int64_t grid = 0;
  CUDA_TRY(choose(num_tiles(n), cfg, finish, &used, &grid));
  return reduce::with_block_size(cfg.block, [&](auto block) -> cudaError_t {
    constexpr unsigned kBlock = decltype(block)::value;
    const Tiling g = tiling(in, n, log2_tile(n));
    cudaError_t e = launch_finish<kBlock>(g, used, grid, scratch.data, n, out, stream);
    if (e == cudaErrorCooperativeLaunchTooLarge) {  // fewer blocks fit than the occupancy API said: no wait
      cudaGetLastError();                           // the refusal is not an error of this launch
      CUDA_TRY(grid_for(num_tiles(n), cfg, Finish::counter, &grid));
      e = launch_finish<kBlock>(g, Finish::counter, grid, scratch.data, n, out, stream);
    }
    CUDA_TRY(e);
    reduce::record_launch(cfg, grid, kBlock);
    return cudaSuccess;
  });
}

cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  return launch(in, n, out, scratch, cfg, Finish::flags, stream);
}

TileRange shard_tiles(std::int64_t n, int ranks, int rank) {
  const std::int64_t tiles = num_tiles(n), per = ranks > 0 ? reduce::ceil_div(tiles, ranks) : 0;
  const std::int64_t first = std::min(tiles, per * rank), last = std::min(tiles, per * (rank + 1));
  return {first, last - first, per};
}

cudaError_t sum_shard_tiles(const float* shard, std::int64_t n, std::int64_t first_tile, std::int64_t tile_count,
                            float* partials, const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  const std::int64_t tiles = num_tiles(n);
  if (n < 0 || !tiles_fit(n) || first_tile < 0 || tile_count < 0 || first_tile + tile_count > tiles)
    return cudaErrorInvalidValue;
  if (tile_count == 0) return cudaSuccess;
  const int lg = log2_tile(n);
  const std::int64_t begin = first_tile << lg, shard_n = std::min(n, (first_tile + tile_count) << lg) - begin;
  std::int64_t grid = 0;
  CUDA_TRY(grid_for(tile_count, cfg, Finish::counter, &grid));  // no finish: no block waits
  return reduce::with_block_size(cfg.block, [&](auto block) -> cudaError_t {
    constexpr unsigned kBlock = decltype(block)::value;
    shard_tile_sums<kBlock><<<static_cast<unsigned>(grid), kBlock, 0, stream>>>(tiling(shard, shard_n, lg), partials);
    CUDA_TRY(cudaGetLastError());
    reduce::record_launch(cfg, grid, kBlock);
    return cudaSuccess;
  });
}

cudaError_t combine_tile_sums(const float* partials, std::int64_t n, float* out, cudaStream_t stream) {
  if (n < 0 || !tiles_fit(n)) return cudaErrorInvalidValue;
  combine_partials<<<1, kCombineBlock, 0, stream>>>(partials, static_cast<unsigned>(num_tiles(n)), out);
  return cudaGetLastError();
}

extern const reduce::Step kStep = {
    "15_reproducible", "the same bits on any GPU: a fixed order", /*deterministic=*/true, reduce::BlockRule::any(512),
    scratch_bytes, launch, /*needs_zeroed_scratch=*/true};

}  // namespace repro
