// The segmented sum's launchers (13_segmented): the suite's own, and CUB's for comparison.
//
// Both sum the floats of every segment s, in[offsets[s] .. offsets[s+1]), into out[s], for
// s = 0 .. segments-1, on `stream`, and return the first CUDA error. Offsets are 64-bit device
// pointers; they must already be valid (validate_offsets() in segments.hpp checks them on the host):
// non-decreasing, offsets[0] >= 0, offsets[segments] <= n. Neither launcher synchronizes, allocates or
// modifies its input; both are deterministic (the same bits every run on one GPU; the suite's launcher
// sizes its grid from the GPU, so another GPU may round differently).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "step.cuh"

namespace seg {

// Length classes the report counts segments in (main.cu's "<= 32 / <= 2048 / <= 16384 / longer") and
// the tests build segments around. The kernel does not branch on them: it cuts the work by elements,
// so every length takes the same path (segmented.cu says how, README.md why).
constexpr std::int64_t kTile = 16384;
constexpr std::int64_t kThreadMax = 32;
constexpr std::int64_t kWarpMax = 2048;

// Device scratch the suite's launcher needs for n floats (independent of the offsets): a counter and
// two partial sums per block, for at most a few thousand blocks.
std::size_t scratch_bytes(std::int64_t n);

cudaError_t launch(const float* in, std::int64_t n, const std::int64_t* offsets, std::int64_t segments, float* out,
                   reduce::Scratch scratch, cudaStream_t stream);

// cub::DeviceSegmentedReduce::Sum on the same arguments (begin offsets = offsets, end offsets =
// offsets + 1). cub_scratch_bytes answers CUB's size query (at least 1 byte).
std::size_t cub_scratch_bytes(std::int64_t segments);
cudaError_t launch_cub(const float* in, const std::int64_t* offsets, std::int64_t segments, float* out,
                       reduce::Scratch scratch, cudaStream_t stream);

}  // namespace seg
