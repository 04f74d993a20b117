// Step 14's launcher, in the suite's step shape (common/step.cuh): a float sum whose bits depend on the
// input alone, not on the grid, the block size, the number of SMs or the GPU. And its two halves, for a
// sum over several GPUs with the same bits (16_multi_gpu/ranks.cuh):
//   shard_tiles(n, ranks, rank)          which tiles of the global n rank `rank` holds;
//   sum_shard_tiles(shard, n, first, count, partials, cfg, stream)
//                                        one float per tile of that shard, in tile order;
//   combine_tile_sums(partials, n, out, stream)
//                                        all num_tiles(n) tile sums in the order's tree: *out has the bits
//                                        of launch() on the whole array, however the tiles were split.
#pragma once

#include "order.hpp"
#include "step.cuh"

namespace step14 {

// Scratch: a 16-byte counter, then one float per tile (rounded up to a multiple of four). It must be
// zero when the launcher starts (the harness zero-fills scratch once), and every launch leaves it zero
// (the last block zeroes what it read), so one scratch serves launches of any n.
std::size_t scratch_bytes(std::int64_t n, const reduce::LaunchConfig& cfg);

// One kernel: cfg.block threads per block (any power of two 32 ... 1024), cfg.grid blocks when > 0,
// else one block per tile up to the device's worth (SM count times resident blocks per SM), and past
// it the fewest rounds of tiles spread evenly: ceil(tiles / rounds) blocks for rounds = ceil(tiles /
// device's worth). Block b sums tiles b, b + grid, ...; the last block to finish combines the tile sums.
cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream);

// The grid launch() picks when cfg.grid is 0 (for reports), or the first CUDA error.
cudaError_t default_grid(std::int64_t n, const reduce::LaunchConfig& cfg, std::int64_t* grid);

extern const reduce::Step kStep;

// --- The same bits on several GPUs ---------------------------------------------------------------
// Tiles first..first+count-1 of the global n's num_tiles(n). Rank r of `ranks` holds tiles
// [r * per, (r + 1) * per) clipped to the tiles there are, per = ceil(tiles / ranks): every rank but the
// last holds `per` whole tiles, so the ranks' partials gathered in rank order into slots of `per` floats
// lie in tile order (the last rank's slot padded, later ranks' empty when tiles < ranks * per).
struct TileRange {
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::int64_t per = 0;  // tiles per rank: the gather's slot size in floats
};
TileRange shard_tiles(std::int64_t n, int ranks, int rank);
// Elements of that shard in the global array: [first << log2_tile(n), min(n, (first + count) << log2_tile(n))),
// none for a rank without tiles.
inline std::int64_t shard_begin(std::int64_t n, const TileRange& r) {
  const std::int64_t begin = r.first * tile_elements(n);
  return begin < n ? begin : n;
}
inline std::int64_t shard_elements(std::int64_t n, const TileRange& r) {
  if (r.count == 0) return 0;
  const std::int64_t end = (r.first + r.count) * tile_elements(n);
  return (end < n ? end : n) - shard_begin(n, r);
}

// Sums tiles first_tile .. first_tile + tile_count - 1 of the global n-element array into
// partials[0 .. tile_count). `shard` points at the shard's first element (global element
// first_tile * tile_elements(n)), on the stream's device; cfg.block / cfg.grid / cfg.sm_count as for
// launch(). No scratch. Enqueues one kernel (none when tile_count is 0).
cudaError_t sum_shard_tiles(const float* shard, std::int64_t n, std::int64_t first_tile, std::int64_t tile_count,
                            float* partials, const reduce::LaunchConfig& cfg, cudaStream_t stream);

// Combines partials[0 .. num_tiles(n)) (every tile's sum, in tile order; any alignment) into *out in
// the order's fixed tree: one block of 1024 threads. With the partials of sum_shard_tiles over any
// split, *out has the bits launch() gives for the whole array.
cudaError_t combine_tile_sums(const float* partials, std::int64_t n, float* out, cudaStream_t stream);

}  // namespace step14
