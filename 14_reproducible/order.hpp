// The order in which step 14 adds, written down once for the kernel (reproducible.cu) and for its CPU
// model (order_model.cpp). Host and device code both include it; nothing here touches a GPU.
//
// The result is a function of the input's values and n only. The input is cut into tiles of
// tile_elements(n) consecutive elements (a power of two that depends on n, never on the device), and
// each tile into kSlices slices of equal size:
//   inside a slice, float4 group f (elements 4f .. 4f+3 of the slice, counted from the slice's first
//   element, not from any address) belongs to lane f % 32, load slot (f / 32) % kLoads and round
//   f / (32 * kLoads); a lane adds the kLoads float4s of a round in a fixed tree (component-wise,
//   (x0 + x1) + (x2 + x3)), adds the round into its float4 accumulator, ends with (x + y) + (z + w), and
//   the 32 lanes are added by the shuffle tree v[l] += v[l + o] for o = 16, 8, 4, 2, 1: lane 0 holds
//   the slice's sum. Elements past n count as +0.
//   The kSlices slice sums of a tile go through the same shuffle tree from o = kSlices / 2: the tile's sum.
// The tile sums are added the same way one level up: float4 q of the tile sums belongs to column
// q % kColumns; a column starts from +0, adds its float4s in order, ends with (x + y) + (z + w); groups
// of 32 consecutive columns go through the shuffle tree, and the kColumns / 32 group sums through it
// once more. Tile sums past the last tile count as +0.
// Which block sums which tile, which warp which slice, and which thread which column, changes nothing
// above: that is all the grid and the block size decide. Nor does where the tiles were summed: tiles
// summed on several GPUs (shards cut on tile boundaries of n) and combined in this tree give the same bits.
#pragma once

#include <cstdint>

// The tile arithmetic runs in the kernel and on the CPU alike.
#if defined(__CUDACC__)
#define REPRO_HOST_DEVICE __host__ __device__
#else
#define REPRO_HOST_DEVICE
#endif

namespace step14 {

constexpr int kLoads = 4;                        // float4 loads in flight per lane in one round (step 10's)
constexpr int kRoundElements = 32 * kLoads * 4;  // one round of a warp: 512 floats
constexpr int kLog2Slices = 4;
constexpr int kSlices = 1 << kLog2Slices;                  // slices of a tile: one warp each in a block of 512 threads
constexpr int kMinLog2Slice = 9;                           // a slice is at least one round
constexpr int kMinLog2Tile = kMinLog2Slice + kLog2Slices;  // 8192 elements
constexpr int kMaxLog2Tile = 20;                           // slices of at most 128 rounds (256 KB), tiles of 4 MB
constexpr int kLog2TilesTarget = 10;                       // 2^9 to 2^10 tiles from 2^22 to 2^30 elements
constexpr int kColumns = 1024;                             // float4 columns of the final combination

// log2 of the tile size for n elements: small inputs get one-round slices (as many warps at work, each
// with 4 loads per lane, as step 10 has at that n), large inputs 2^9 to 2^10 tiles (few tile sums for
// the last block to read, about two tiles per block of 512 threads on a 132-SM GPU, more on smaller
// ones); past 2^30 the tiles stay at 2^20 elements and their count grows.
REPRO_HOST_DEVICE constexpr int log2_tile(std::int64_t n) {
  int bits = 0;  // ceil(log2(n))
  while (bits < 62 && (std::int64_t{1} << bits) < n) ++bits;
  const int t = bits - kLog2TilesTarget;
  return t < kMinLog2Tile ? kMinLog2Tile : (t > kMaxLog2Tile ? kMaxLog2Tile : t);
}
REPRO_HOST_DEVICE constexpr std::int64_t tile_elements(std::int64_t n) { return std::int64_t{1} << log2_tile(n); }
REPRO_HOST_DEVICE constexpr std::int64_t slice_elements(std::int64_t n) { return tile_elements(n) >> kLog2Slices; }
REPRO_HOST_DEVICE constexpr std::int64_t num_tiles(std::int64_t n) {
  return (n + tile_elements(n) - 1) / tile_elements(n);
}

// The CPU model: the kernel's result computed on the CPU in the same order, bit for bit (IEEE float
// additions in round-to-nearest, as both processors do them without fast-math). Threads over tiles.
float model_sum(const float* x, std::int64_t n);

}  // namespace step14
