// Step 15's launcher, in the suite's step shape (common/step.cuh): a float sum whose bits depend on the
// input alone, not on the grid, the block size, the number of SMs or the GPU.
#pragma once

#include "order.hpp"
#include "step.cuh"

namespace repro {

// Scratch: a 16-byte counter slot, then one float per tile (rounded up to whole float4s). Zero-filled
// when the launcher starts, zero-filled again when its kernel ends.
std::size_t scratch_bytes(std::int64_t n, const reduce::LaunchConfig& cfg);

// One kernel: cfg.block threads per block (any power of two 32 ... 1024), cfg.grid blocks when > 0,
// else the device's SM count times the resident blocks per SM, at most one block per tile.
cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream);

// The grid launch() picks when cfg.grid is 0 (for reports), or the first CUDA error.
cudaError_t default_grid(std::int64_t n, const reduce::LaunchConfig& cfg, std::int64_t* grid);

extern const reduce::Step kStep;

}  // namespace repro
