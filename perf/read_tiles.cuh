// The read-only streaming kernel of perf/: one tile of Block threads x Loads float4s per block, every
// load issued before the first add, and a partial sum nobody reads (it keeps the loads alive). One
// tile per block lets the hardware hand tiles to whichever SM is free; no block waits for another.
// perf/read_ceiling.cu times it at one shape; the set `tiles` of perf/variants.cu at every shape.
#pragma once

#include <cstdint>

template <int Block, int Loads>
__global__ void __launch_bounds__(Block)
    read_tiles(const float4* __restrict__ in, std::int64_t vectors, float* __restrict__ sink) {
  const std::int64_t base = blockIdx.x * (std::int64_t{Block} * Loads) + threadIdx.x;
  float4 x[Loads];
#pragma unroll
  for (int k = 0; k < Loads; ++k) {
    const std::int64_t v = base + k * Block;
    x[k] = v < vectors ? in[v] : float4{0.0f, 0.0f, 0.0f, 0.0f};
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < Loads; ++k) sum += (x[k].x + x[k].y) + (x[k].z + x[k].w);
  if (sum == -1.0f) sink[blockIdx.x] = sum;  // never true for the zero-filled input
}
