// Step 14: the same bits on any GPU.
//
// What it shows: steps 05-10 and CUB give the same result run after run on one GPU, but not the same
// result on another GPU, nor with another block size. Floating-point addition is not associative,
// and their grouping follows the launch: thread t adds elements t, t + T, ... (T threads in all), a
// block adds its threads, block 0 its blocks, and T comes from the SM count and the occupancy. Here
// the grouping is fixed by the input alone (order.hpp): tiles of a size that depends on n only, each
// cut into 16 slices; a slice is summed by one warp in a fixed order, a tile's 16 slice sums in a fixed
// tree (so the block size cannot matter), and the tile sums in a fixed tree over fixed columns (so the
// grid cannot matter). The grid only decides which block sums which tile, the block size which warp
// sums which slice. The loads are step 10's, contiguous per warp, four float4s a round per lane, with
// two rounds in flight: launch bounds for half an SM's threads give 64 registers a thread, so a lane
// issues its next round (or its next slice's first) before it adds the current one.
// What changed from step 10: a block owns a tile by its index in the array rather than by its place in
// the grid, and hands over one float per tile; the last block to finish (a device-scope counter that
// every block bumps once, where step 08 has block 0 wait on flags) adds the tile sums in the fixed
// tree. Misaligned inputs take scalar loads in the same order, so their bits equal an aligned copy's.
// The same two halves, summing tiles and combining their sums, are the multi-GPU API below: tiles
// summed on several GPUs and combined in the same tree give the same bits (16_multi_gpu/ranks.cuh).
// Usage: ./14_reproducible [--n 2^26] [--grid 132] [--block 512] [--help]
#include <cuda/atomic>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "agent.cuh"
#include "reproducible.cuh"

namespace step14 {
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

// Where a block's tile sums go: a float per tile, read after the counter says every block is done
// (and by 14's shards).
struct PlainSums {
  float* sums;
  __device__ void operator()(unsigned t, float s) const { sums[t] = s; }
};

// Slices s = first, first + step, ... < kSlices of tile t (slices of 2^lg_slice elements) with scalar
// loads, elements at or past n read as +0, each summed by the calling warp into slice_sums[s]:
// misaligned inputs and the last tile. Not inlined, so that its registers do not count against the hot
// loop's.
__device__ __noinline__ void sum_slices_scalar(const float* in, std::int64_t n, unsigned t, int lg_slice,
                                               unsigned first, unsigned step, float* slice_sums) {
  const unsigned lane = threadIdx.x % 32;
  const int rounds = 1 << (lg_slice - kMinLog2Slice);
  for (unsigned s = first; s < kSlices; s += step) {
    const std::int64_t start = std::int64_t{(t << kLog2Slices) + s} << lg_slice;
    float4 x[kLoads];
    load_round_scalar(in + start, n - start, 0, lane, x);
    float4 acc = round_tree(x);
    for (int r = 1; r < rounds; ++r) {
      load_round_scalar(in + start, n - start, r, lane, x);
      acc = acc + round_tree(x);
    }
    const float v = warp_reduce(lane_total(acc), Plus{});
    if (lane == 0) slice_sums[s] = v;
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

// A tile's kSlices slice sums (in shared memory, written by the block's warps) in the order's tree, by
// warp 0; the tile's sum goes to store. The barrier first: every slice of the tile is summed.
template <typename Store>
__device__ __forceinline__ void add_slices(const float* slice_sums, unsigned t, Store store) {
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < kSlices ? slice_sums[threadIdx.x] : 0.0f;
#pragma unroll
    for (int o = kSlices / 2; o > 0; o /= 2) v += __shfl_down_sync(reduce::agent::kFullMask, v, o);
    if (threadIdx.x == 0) store(t, v);
  }
}

// Block b sums tiles b, b + gridDim.x, ... of the input, each into store. Warp w of the block's W warps
// sums slices w, w + W, ... of each tile (with more than kSlices warps, the rest only wait at the
// barriers). Whole tiles of an aligned input take 16-byte loads, and a warp loads its next slice's
// first round before the current slice's shuffle tree, so that its loads are in flight while it
// shuffles; the rest takes scalar loads. The slice sums of a tile go to shared memory, two tiles'
// worth, so that a tile's slices are written while warp 0 still reads the tile before: one barrier per
// tile.
template <unsigned Block, typename Store>
__device__ __forceinline__ void sum_tiles(const Tiling& g, Store store) {
  constexpr unsigned kWarps = Block / 32, kPerWarp = kWarps < kSlices ? kSlices / kWarps : 1;
  __shared__ float slice_sums[2][kSlices];
  const unsigned warp = threadIdx.x / 32;
  const bool reads = warp < kSlices;
  const int lg_slice = g.lg - kLog2Slices, rounds = 1 << (lg_slice - kMinLog2Slice);
  // The lane's first float4 of slice s of tile t.
  const auto slice_at = [&](unsigned t, unsigned s) {
    return reinterpret_cast<const float4*>(g.in) + threadIdx.x % 32 +
           (std::int64_t{(t << kLog2Slices) + s} << (lg_slice - 2));
  };
  // The warp's slices in order, u = 0, 1, ...: slice warp + (u % kPerWarp) * kWarps of the block's
  // tile u / kPerWarp (tile blockIdx.x + (u / kPerWarp) * gridDim.x). One counter, so that the loop
  // holds few registers beside the loads' (32 a thread, 16 of them the loads').
  const auto tile_of = [&](unsigned u) { return blockIdx.x + u / kPerWarp * gridDim.x; };
  const auto slice_of = [&](unsigned u) { return warp + u % kPerWarp * kWarps; };
  unsigned u = 0;
  const float4* p = slice_at(blockIdx.x, warp);
  float4 x[kLoads];
  if (reads && blockIdx.x < g.whole) load_round(p, 0, x);
  for (; tile_of(u) < g.whole; ++u) {
    if (reads) {
      // Two rounds in flight: round r is issued before round r - 1 is added, and after the slice's last
      // round comes the warp's next slice's first. After the warp's last whole tile nothing: a
      // placeholder load there (this slice again) was copied into x, so the warp waited for it before
      // its last shuffle (docs/method.md).
      const bool more = tile_of(u + 1) < g.whole;
      const float4* const next = more ? slice_at(tile_of(u + 1), slice_of(u + 1)) : p;
      // excerpt: slice
      float4 acc{0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 1
      for (int r = 1; r <= rounds; ++r) {
        float4 y[kLoads];
        if (r < rounds)
          load_round(p, r, y);
        else if (more)
          load_round(next, 0, y);
        acc = r == 1 ? round_tree(x) : acc + round_tree(x);
#pragma unroll
        for (int k = 0; k < kLoads; ++k) x[k] = y[k];
      }
      p = next;
      const float v = warp_reduce(lane_total(acc), Plus{});
      if (threadIdx.x % 32 == 0) slice_sums[u / kPerWarp % 2][slice_of(u)] = v;
      // end excerpt
    }
    if (u % kPerWarp == kPerWarp - 1) add_slices(slice_sums[u / kPerWarp % 2], tile_of(u), store);
  }
  for (; tile_of(u) < g.tiles; u += kPerWarp) {  // the last, cut tile, and every tile of a misaligned input
    if (reads) sum_slices_scalar(g.in, g.n, tile_of(u), lg_slice, warp, kWarps, slice_sums[u / kPerWarp % 2]);
    add_slices(slice_sums[u / kPerWarp % 2], tile_of(u), store);
  }
}

// The fixed tree over the tile sums (order.hpp), by a block of Block threads. Thread j owns columns
// j, j + Block, ... (one, or several when Block < kColumns): it adds a column's float4s in order, from +0,
// Load::kBatch loads at a time, in registers. The 32 lanes of a warp then hold the 32 columns of one
// group, whose sum is the warp's shuffle tree; warp 0 adds the group sums. Columns without a tile
// stay +0 (adding +0 to a sum that is never -0 changes no bit). load.batch(q, quads, v) sets v[b] to
// float4 q[b] of the sums for each q[b] < quads, all Load::kBatch of them loaded at once. The result is
// in thread 0.
static_assert(kColumns == 32 * 32, "the group sums go through one warp's shuffle tree");

template <unsigned Block, typename Load>
__device__ __noinline__ float combine_tree(const Load& load, unsigned tiles) {
  constexpr unsigned kGroups = kColumns / 32, kMine = kColumns > Block ? kColumns / Block : 1;
  constexpr int kBatch = Load::kBatch;
  __shared__ float group_sums[kGroups];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned quads = (tiles + 3) / 4, per_column = (quads + kColumns - 1) / kColumns;
  for (unsigned m = 0; m < kMine; ++m) {
    const unsigned c = threadIdx.x + m * Block;  // the column; the same group in every lane of the warp
    if (c >= kColumns) break;
    float4 acc{0.0f, 0.0f, 0.0f, 0.0f};
    for (unsigned i0 = 0; i0 < per_column; i0 += kBatch) {
      unsigned q[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) q[b] = i0 + b < per_column ? c + (i0 + b) * kColumns : quads;  // quads: none
      float4 v[kBatch];
      load.batch(q, quads, v);
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
        if (q[b] < quads) acc = acc + v[b];
    }
    const float s = warp_reduce(lane_total(acc), Plus{});
    if (lane == 0) group_sums[c / 32] = s;
  }
  __syncthreads();
  return warp == 0 ? warp_reduce(group_sums[lane], Plus{}) : 0.0f;
}

// The launch bounds ask for half an SM: half the threads an SM holds (1024 of the 2048 on sm_80 and
// sm_90), so 64 registers a thread, two rounds of loads in flight per lane (as many bytes in flight per
// SM as step 10's full SM with one round). REPRO_SM_QUARTERS=3 or 4 at build time asks for 3/4 or all
// of the SM instead (40 or 32 registers; the README's measurement of the three); below 512 threads, where
// a warp sums several slices of each tile, never more than 3/4. In at most as many blocks as an SM holds.
// Per architecture compiled for, so that ptxas is never asked for more than the SM has.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
constexpr unsigned kThreadsPerSm = 1024, kBlocksPerSm = 16;
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870)
constexpr unsigned kThreadsPerSm = 1536, kBlocksPerSm = 16;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 890
constexpr unsigned kThreadsPerSm = 1536, kBlocksPerSm = 24;
#else
constexpr unsigned kThreadsPerSm = 2048, kBlocksPerSm = 32;
#endif
#ifndef REPRO_SM_QUARTERS
#define REPRO_SM_QUARTERS 2
#endif
template <unsigned Block>
constexpr unsigned kThreadsAimed = kThreadsPerSm / 4 *
                                   (Block >= 32 * kSlices || REPRO_SM_QUARTERS < 3 ? REPRO_SM_QUARTERS : 3);
template <unsigned Block>
constexpr unsigned kMinBlocks = kThreadsAimed<Block> < Block
                                    ? 1
                                    : (kThreadsAimed<Block> / Block < kBlocksPerSm ? kThreadsAimed<Block> / Block
                                                                                   : kBlocksPerSm);

// combine_tree's Load for the tile sums in scratch, Load::kBatch float4s at once: from L2 (cg), where
// the other SMs' stores went (the counter's acquire orders these loads after them). Those past the last
// tile read as +0 (the scratch is padded to whole float4s). Each float4 read is zeroed behind it, so
// that the launch leaves its scratch as it found it (a store per float4, waited for by nobody).
struct TileSums {
  static constexpr int kBatch = kLoads;
  float* sums;
  unsigned tiles;
  __device__ void batch(const unsigned (&q)[kBatch], unsigned quads, float4 (&v)[kBatch]) const {
    float4* const at = reinterpret_cast<float4*>(sums);
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (q[b] < quads) v[b] = __ldcg(at + q[b]);
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (q[b] >= quads) continue;
      __stcg(at + q[b], float4{0.0f, 0.0f, 0.0f, 0.0f});
      const unsigned t = 4 * q[b];
      if (t + 4 > tiles) {
        if (t + 1 >= tiles) v[b].y = 0.0f;
        if (t + 2 >= tiles) v[b].z = 0.0f;
        if (t + 3 >= tiles) v[b].w = 0.0f;
      }
    }
  }
};

// Block b sums tiles b, b + gridDim.x, ...; the last block to finish combines the tile sums. Any grid:
// no block waits for another to start.
using Counter = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

template <unsigned Block>
__global__ void __launch_bounds__(Block, kMinBlocks<Block>)
    reduce_reproducible(const Tiling g, float* tile_sums, unsigned* counter, float* out) {
  sum_tiles<Block>(g, PlainSums{tile_sums});

  // Every tile sum of the block is stored (by thread 0 itself, after the barrier of its last tile),
  // then one release-acquire counter: the block that brings it to gridDim.x sees every block's sums
  // and combines them.
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) last = Counter(*counter).fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  const float total = combine_tree<Block>(TileSums{tile_sums, g.tiles}, g.tiles);
  if (threadIdx.x == 0) {
    *out = total;
    Counter(*counter).store(0, cuda::memory_order_relaxed);  // every block has counted: zero for the next launch
  }
}

// The multi-GPU halves: a shard's tiles into partials (no hand-over), and the tree over all partials.
template <unsigned Block>
__global__ void __launch_bounds__(Block, kMinBlocks<Block>) shard_tile_sums(const Tiling g, float* partials) {
  sum_tiles<Block>(g, PlainSums{partials});
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

constexpr std::size_t kCounterBytes = 16;  // keeps the tile sums behind it 16-byte aligned

// Scratch for n elements: the counter, then one float per tile, rounded up to whole float4s.
std::int64_t quads_of(std::int64_t n) { return (num_tiles(n) + 3) / 4; }
unsigned* counter_in(void* scratch) { return static_cast<unsigned*>(scratch); }
float* sums_in(void* scratch) { return reinterpret_cast<float*>(static_cast<unsigned char*>(scratch) + kCounterBytes); }

// Resident blocks per SM of the kernel for this block size, asked once: they do not change on this
// process's devices (the suite's GPUs are of one kind).
template <unsigned Block>
cudaError_t blocks_per_sm(int* per_sm) {
  static std::atomic<int> cached{0};
  int v = cached.load();
  if (v == 0) {
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, reduce_reproducible<Block>, Block, 0));
    cached.store(v);
  }
  *per_sm = v;
  return cudaSuccess;
}

// Blocks for `tiles` tiles: as few rounds of tiles as the device allows, rounds = ceil(tiles / device)
// where device = resident blocks per SM times cfg.sm_count, and the tiles spread evenly over them:
// ceil(tiles / rounds) blocks (one per tile up to the device's worth), each summing `rounds` tiles or
// one fewer. 1024 tiles on 264 resident blocks take 256 blocks of four tiles, not 232 of four and 32
// of three whose SMs idle in the last round (docs/method.md). At least one block; cfg.grid when the
// caller chose.
cudaError_t grid_for(std::int64_t tiles, const reduce::LaunchConfig& cfg, std::int64_t* grid) {
  if (cfg.grid > 0x7fffffff) return cudaErrorInvalidValue;
  if (cfg.grid > 0) {
    *grid = cfg.grid;
    return cudaSuccess;
  }
  int per_sm = 0;
  CUDA_TRY(reduce::with_block_size(cfg.block, [&](auto block) { return blocks_per_sm<block>(&per_sm); }));
  const std::int64_t device = std::max<std::int64_t>(std::int64_t{per_sm} * (cfg.sm_count > 0 ? cfg.sm_count : 1), 1);
  const std::int64_t rounds = reduce::ceil_div(std::max<std::int64_t>(tiles, 1), device);
  *grid = reduce::ceil_div(std::max<std::int64_t>(tiles, 1), rounds);
  return cudaSuccess;
}

// The tiling of in[0..n) in tiles of 2^lg elements.
Tiling tiling(const float* in, std::int64_t n, int lg) {
  const bool aligned = reinterpret_cast<std::uintptr_t>(in) % 16 == 0;
  return {in, n, lg, static_cast<unsigned>((n + (std::int64_t{1} << lg) - 1) >> lg),
          aligned ? static_cast<unsigned>(n >> lg) : 0u};
}

// Tile indices are 32-bit in the kernels: n up to reduce::max_n() gives at most 2^16 tiles.
bool tiles_fit(std::int64_t n) { return num_tiles(n) <= 0x7fffffff; }

}  // namespace

std::size_t scratch_bytes(std::int64_t n, const reduce::LaunchConfig&) {
  return kCounterBytes + static_cast<std::size_t>(quads_of(n)) * 4 * sizeof(float);
}

cudaError_t default_grid(std::int64_t n, const reduce::LaunchConfig& cfg, std::int64_t* grid) {
  if (n < 0 || !tiles_fit(n)) return cudaErrorInvalidValue;
  reduce::LaunchConfig chosen = cfg;
  chosen.grid = 0;
  return grid_for(num_tiles(n), chosen, grid);
}

cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  if (n < 0 || !tiles_fit(n) || scratch.bytes < scratch_bytes(n, cfg)) return cudaErrorInvalidValue;
  std::int64_t grid = 0;
  CUDA_TRY(grid_for(num_tiles(n), cfg, &grid));
  return reduce::with_block_size(cfg.block, [&](auto block) -> cudaError_t {
    constexpr unsigned kBlock = decltype(block)::value;
    reduce_reproducible<kBlock><<<static_cast<unsigned>(grid), kBlock, 0, stream>>>(
        tiling(in, n, log2_tile(n)), sums_in(scratch.data), counter_in(scratch.data), out);
    CUDA_TRY(cudaGetLastError());
    return cudaSuccess;
  });
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
  CUDA_TRY(grid_for(tile_count, cfg, &grid));
  return reduce::with_block_size(cfg.block, [&](auto block) -> cudaError_t {
    constexpr unsigned kBlock = decltype(block)::value;
    shard_tile_sums<kBlock><<<static_cast<unsigned>(grid), kBlock, 0, stream>>>(tiling(shard, shard_n, lg), partials);
    CUDA_TRY(cudaGetLastError());
    return cudaSuccess;
  });
}

cudaError_t combine_tile_sums(const float* partials, std::int64_t n, float* out, cudaStream_t stream) {
  if (n < 0 || !tiles_fit(n)) return cudaErrorInvalidValue;
  combine_partials<<<1, kCombineBlock, 0, stream>>>(partials, static_cast<unsigned>(num_tiles(n)), out);
  return cudaGetLastError();
}

extern const reduce::Step kStep = {
    "14_reproducible",
    "the same bits on any GPU: a fixed order",
    /*deterministic=*/true,
    reduce::BlockRule::any(512),
    scratch_bytes,
    launch,
    /*needs_zeroed_scratch=*/true,
};

}  // namespace step14
