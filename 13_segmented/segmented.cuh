// The segmented sum's launchers (13_segmented): the suite's own, and the toolkit's CUB for comparison
// (cub35.hpp holds the newest CUB's, built only when configure was given one).
//
// launch sums the floats of every segment s, in[offsets[s] .. offsets[s+1]), into out[s], for
// s = 0 .. segments-1; launch_fixed sums in[s * L .. (s + 1) * L) for L = segment_size, reading no
// offsets. Both run on `stream` and return the first CUDA error. Offsets are 64-bit device pointers;
// they must already be valid (validate_offsets() in segments.hpp checks them on the host):
// non-decreasing, offsets[0] >= 0, offsets[segments] <= n; for launch_fixed, segments * L <= n. No
// launcher synchronizes, allocates or modifies its input; every one is deterministic (the same bits
// every run on one GPU).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "step.cuh"

namespace step13 {

// Floats per tile: the unit of work of one block of the suite's kernel. A segment longer than a tile
// is summed by several blocks (one per tile it touches); one of up to a tile by one block, or by one
// warp, or by one thread, by its length (segmented.cu says where each bound comes from).
constexpr std::int64_t kTile = 32768;
constexpr std::int64_t kThreadMax = 32;  // a thread sums a segment of at most this many floats...
constexpr std::int64_t kWarpMax = 2048;  // ...a warp one of at most this many, a block one of at most kTile

// Device scratch either launcher needs for n floats (independent of the offsets). It must be
// zero-filled before the first launch that uses it (as the harness's scratch is: step.cuh). The long
// segments' counts of parts live there, at the same bytes for every n, and every launch leaves them at
// zero again: one scratch serves launches of any n it is large enough for, back to back, unzeroed.
std::size_t scratch_bytes(std::int64_t n);

// Where each tile's first segment is found (launch only; the fixed-size mode computes it): by a small
// kernel of its own before the summing kernel (kernel), by each block at its start (block), or
// (automatic) by the kernel where there are more segments than tiles, else by the blocks. A few
// offsets stay in L2 and the blocks' searches mostly overlap their first loads, costing less than a
// launch of their own; many offsets make each block's search a chain of trips to DRAM (13's README,
// "The tiles' search in the blocks", has the A/B). A block that searches at most kBlockProbes offsets
// loads them all at once and counts (one trip to L2); more, it narrows the range round by round.
enum class Search { automatic, kernel, block };
constexpr std::int64_t kBlockProbes = 2048;
bool search_in_kernel(std::int64_t n, std::int64_t segments, Search search);  // what launch does

cudaError_t launch(const float* in, std::int64_t n, const std::int64_t* offsets, std::int64_t segments, float* out,
                   reduce::Scratch scratch, cudaStream_t stream, Search search = Search::automatic);
cudaError_t launch_fixed(const float* in, std::int64_t n, std::int64_t segment_size, std::int64_t segments, float* out,
                         reduce::Scratch scratch, cudaStream_t stream);

// cub::DeviceSegmentedReduce::Sum of the toolkit's CUB on the same arguments (begin offsets = offsets,
// end offsets = offsets + 1). cub_scratch_bytes answers CUB's size query (at least 1 byte).
std::size_t cub_scratch_bytes(std::int64_t segments);
cudaError_t launch_cub(const float* in, const std::int64_t* offsets, std::int64_t segments, float* out,
                       reduce::Scratch scratch, cudaStream_t stream);

}  // namespace step13
