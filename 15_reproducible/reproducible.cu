// Step 15: the same bits on any GPU.
//
// What it shows: steps 05-10 and CUB give the same result run after run on one GPU, but not the same
// result on another GPU, nor with another block size. Floating-point addition is not associative,
// and their grouping follows the launch: thread t adds elements t, t + T, ... (T threads in all), a
// block adds its threads, block 0 its blocks, and T comes from the SM count and the occupancy. Here
// the grouping is fixed by the input alone (order.hpp): tiles of a size that depends on n only, each
// summed by one warp in a fixed order (so the block size cannot matter), the tile sums kept in
// scratch and combined by the last block to finish in a fixed tree over fixed columns (so the grid
// cannot matter). The grid only decides which warp computes which tile. The loads are step 10's:
// several float4s in flight per thread, contiguous per warp.
// What changed from step 10: a warp, not a block, owns a piece of the input, and owns it by its index
// in the array rather than by its place in the grid; a warp writes one float per tile to scratch; the
// last block (a counter, not block 0 waiting) adds them. Misaligned inputs take scalar loads in the
// same order, so their bits equal an aligned copy's.
// Usage: ./15_reproducible [--n 2^26] [--grid 132] [--block 512] [--help]
#include <cuda/atomic>

#include <atomic>
#include <cstdint>

#include "reproducible.cuh"

namespace repro {

constexpr unsigned kFullMask = 0xffffffffu;

// The sum of v over the warp, in lane 0: v[l] += v[l + o], o = 16 ... 1 (order.hpp).
__device__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

__device__ float4 operator+(float4 a, float4 b) { return {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w}; }

// Float4 group f of one tile: one 16-byte load on the aligned path...
struct VectorLoad {
  const float4* tile;  // the tile's first element, 16-byte aligned
  __device__ float4 operator()(int f) const { return tile[f]; }
};
// ...four 4-byte loads otherwise, the elements past the input's end read as +0 (the last tile).
struct ScalarLoad {
  const float* tile;
  std::int64_t left;  // elements from the tile's start to the input's end
  __device__ float4 operator()(int f) const {
    const std::int64_t i = 4 * std::int64_t{f};
    return {i < left ? tile[i] : 0.0f, i + 1 < left ? tile[i + 1] : 0.0f, i + 2 < left ? tile[i + 2] : 0.0f,
            i + 3 < left ? tile[i + 3] : 0.0f};
  }
};

// This lane's share of a tile (rounds of kLoads float4s, all loads before the
// first add), then the warp's: the tile's sum in lane 0. Both loaders go through the same additions.
template <typename Load>
__device__ float tile_sum(const Load& load, int rounds, unsigned lane) {
  float4 acc{0.0f, 0.0f, 0.0f, 0.0f};
  for (int r = 0; r < rounds; ++r) {
    float4 x[kLoads];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) x[k] = load(r * 32 * kLoads + k * 32 + static_cast<int>(lane));
    const float4 s = ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
    acc = r == 0 ? s : acc + s;
  }
  return warp_sum((acc.x + acc.y) + (acc.z + acc.w));
}

using Counter = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

// The last block: column j (thread j, j + Block, ...) adds float4s j, j + kColumns, ... of the tile
// sums, zeroing them behind it; warps add 32 consecutive columns, warp 0 the 32 group sums.
template <unsigned Block>
__device__ float combine_tile_sums(float* tile_sums, std::int64_t tiles) {
  __shared__ float group_sums[kColumns / 32];
  const unsigned lane = threadIdx.x % 32;
  const std::int64_t quads = (tiles + 3) / 4;
  auto* sums4 = reinterpret_cast<float4*>(tile_sums);
  constexpr int kBatch = 8;  // loads in flight per thread
#pragma unroll 1
  for (unsigned j = threadIdx.x; j < kColumns; j += Block) {
    float4 acc{0.0f, 0.0f, 0.0f, 0.0f};
    for (std::int64_t q0 = j; q0 < quads; q0 += std::int64_t{kColumns} * kBatch) {
      float4 v[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const std::int64_t q = q0 + std::int64_t{b} * kColumns;
        // From L2 (cg): other SMs wrote these; the counter's acquire orders the loads after their writes.
        v[b] = q < quads ? __ldcg(&sums4[q]) : float4{0.0f, 0.0f, 0.0f, 0.0f};
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const std::int64_t q = q0 + std::int64_t{b} * kColumns;
        if (q < quads) __stcg(&sums4[q], float4{0.0f, 0.0f, 0.0f, 0.0f});  // scratch left zero-filled
        if (4 * q + 4 > tiles) {  // the last float4 may reach past the tiles: those count as +0
          if (4 * q + 1 >= tiles) v[b].y = 0.0f;
          if (4 * q + 2 >= tiles) v[b].z = 0.0f;
          if (4 * q + 3 >= tiles) v[b].w = 0.0f;
        }
        if (q < quads) acc = acc + v[b];
      }
    }
    const float column_group = warp_sum((acc.x + acc.y) + (acc.z + acc.w));  // columns j - lane ... j - lane + 31
    if (lane == 0) group_sums[j / 32] = column_group;
  }
  __syncthreads();
  return threadIdx.x < 32 ? warp_sum(group_sums[lane]) : 0.0f;
}

// Warp w of block b is global warp w * gridDim.x + b (blocks first, so that a small n spreads its few
// tiles over many SMs) and sums tiles g, g + warps, ...; the last block to finish combines the sums.
template <unsigned Block>
__global__ void __launch_bounds__(Block) reduce_reproducible(const float* in, std::int64_t n, float* tile_sums,
                                                             unsigned* counter, float* out) {
  const unsigned lane = threadIdx.x % 32;
  const int lg = log2_tile(n);
  const std::int64_t tile = std::int64_t{1} << lg, tiles = num_tiles(n);
  const int rounds = static_cast<int>(tile / kRoundElements);
  const std::int64_t warps = std::int64_t{gridDim.x} * (Block / 32);
  const std::int64_t first_tile = std::int64_t{threadIdx.x / 32} * gridDim.x + blockIdx.x;
  const std::int64_t full_tiles = n / tile;
  const bool aligned = reinterpret_cast<std::uintptr_t>(in) % 16 == 0;

  for (std::int64_t t = first_tile; t < tiles; t += warps) {
    const float s = aligned && t < full_tiles ? tile_sum(VectorLoad{reinterpret_cast<const float4*>(in + t * tile)}, rounds, lane)
                                              : tile_sum(ScalarLoad{in + t * tile, n - t * tile}, rounds, lane);
    if (lane == 0) tile_sums[t] = s;
  }

  // Hand-over: every warp of the block has stored its sums (barrier), then one release-acquire
  // counter: the block that brings it to gridDim.x sees every block's sums and combines them.
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) last = Counter(*counter).fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  const float total = combine_tile_sums<Block>(tile_sums, tiles);
  if (threadIdx.x == 0) {
    *out = total;
    Counter(*counter).store(0, cuda::memory_order_relaxed);  // every block has counted: zero for the next launch
  }
}

namespace {
constexpr std::size_t kCounterBytes = 16;  // keeps the tile sums 16-byte aligned

template <unsigned Block>
cudaError_t blocks_per_sm(int* per_sm) {
  // Resident blocks per SM do not change for this kernel on this process's device: asked once.
  static std::atomic<int> cached{0};
  int v = cached.load();
  if (v == 0) {
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, reduce_reproducible<Block>, Block, 0));
    cached.store(v);
  }
  *per_sm = v;
  return cudaSuccess;
}
}  // namespace

std::size_t scratch_bytes(std::int64_t n, const reduce::LaunchConfig&) {
  return kCounterBytes + static_cast<std::size_t>((num_tiles(n) + 3) / 4 * 4) * sizeof(float);
}

cudaError_t default_grid(std::int64_t n, const reduce::LaunchConfig& cfg, std::int64_t* grid) {
  int per_sm = 0;
  CUDA_TRY(reduce::with_block_size(cfg.block, [&](auto block) { return blocks_per_sm<block>(&per_sm); }));
  const std::int64_t device = std::int64_t{per_sm} * (cfg.sm_count > 0 ? cfg.sm_count : 1);
  *grid = std::clamp<std::int64_t>(num_tiles(n), 1, std::max<std::int64_t>(device, 1));
  return cudaSuccess;
}

cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  if (n < 0 || scratch.bytes < scratch_bytes(n, cfg)) return cudaErrorInvalidValue;
  std::int64_t grid = cfg.grid;
  if (grid <= 0) CUDA_TRY(default_grid(n, cfg, &grid));
  if (grid > 0x7fffffff) return cudaErrorInvalidValue;
  auto* const counter = static_cast<unsigned*>(scratch.data);
  auto* const tile_sums = reinterpret_cast<float*>(static_cast<unsigned char*>(scratch.data) + kCounterBytes);
  return reduce::with_block_size(cfg.block, [&](auto block) -> cudaError_t {
    constexpr unsigned kBlock = decltype(block)::value;
    reduce_reproducible<kBlock><<<static_cast<unsigned>(grid), kBlock, 0, stream>>>(in, n, tile_sums, counter, out);
    CUDA_TRY(cudaGetLastError());
    reduce::record_launch(cfg, grid, kBlock);
    return cudaSuccess;
  });
}

extern const reduce::Step kStep = {
    "15_reproducible", "the same bits on any GPU: a fixed order", /*deterministic=*/true, reduce::BlockRule::any(512),
    scratch_bytes, launch, /*needs_zeroed_scratch=*/true};

}  // namespace repro
