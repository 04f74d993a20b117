// The CPU model of step 14's order (order.hpp): the same additions as the kernel, one by one, so the
// tests can ask for the GPU's bits exactly, and the committed bits file can be checked anywhere.
#include <algorithm>
#include <array>
#include <thread>
#include <vector>

#include "order.hpp"

namespace step14 {
namespace {

struct F4 {
  float x = 0.0f, y = 0.0f, z = 0.0f, w = 0.0f;
};
F4 operator+(const F4& a, const F4& b) { return {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w}; }

// Float4 group f of x[0..n) counted from element `first`; elements past n are +0.
F4 group(const float* x, std::int64_t n, std::int64_t first, std::int64_t f) {
  float v[4];
  for (int c = 0; c < 4; ++c) {
    const std::int64_t i = first + 4 * f + c;
    v[c] = i < n ? x[i] : 0.0f;
  }
  return {v[0], v[1], v[2], v[3]};
}

// The shuffle tree v[l] += v[l + o], o = 16 ... 1; returns lane 0.
float warp_tree(std::array<float, 32> v) {
  for (int o = 16; o > 0; o /= 2)
    for (int l = 0; l < o; ++l) v[l] = v[l] + v[l + o];
  return v[0];
}

// kLoads float4s in the kernel's tree: pairs, then pairs of pairs.
F4 round_tree(const F4* x) {
  static_assert(kLoads == 4, "the tree below is written for 4 loads");
  return (x[0] + x[1]) + (x[2] + x[3]);
}

// Slice `slice` of x[0..n) (slices of slice_elements(n), counted over the whole array): the lanes'
// rounds, then the shuffle tree.
float slice_sum(const float* x, std::int64_t n, std::int64_t slice) {
  const std::int64_t size = slice_elements(n), first = slice * size;
  const std::int64_t rounds = size / kRoundElements;
  std::array<float, 32> lanes{};
  for (int lane = 0; lane < 32; ++lane) {
    F4 acc;
    for (std::int64_t r = 0; r < rounds; ++r) {
      F4 loads[kLoads];
      for (int k = 0; k < kLoads; ++k) loads[k] = group(x, n, first, r * 32 * kLoads + k * 32 + lane);
      const F4 s = round_tree(loads);
      acc = r == 0 ? s : acc + s;
    }
    lanes[lane] = (acc.x + acc.y) + (acc.z + acc.w);
  }
  return warp_tree(lanes);
}

// A tile: its kSlices slice sums in the shuffle tree from o = kSlices / 2 (the lanes past them hold +0
// and never reach lane 0).
float tile_sum(const float* x, std::int64_t n, std::int64_t tile) {
  std::array<float, kSlices> v{};
  for (int s = 0; s < kSlices; ++s) v[s] = slice_sum(x, n, tile * kSlices + s);
  for (int o = kSlices / 2; o > 0; o /= 2)
    for (int l = 0; l < o; ++l) v[l] = v[l] + v[l + o];
  return v[0];
}

}  // namespace

float model_sum(const float* x, std::int64_t n) {
  const std::int64_t tiles = num_tiles(n);
  std::vector<float> sums(static_cast<std::size_t>((tiles + 3) / 4 * 4), 0.0f);
  const int threads = static_cast<int>(std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, 64));
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w)
    pool.emplace_back([&, w] {
      for (std::int64_t t = w; t < tiles; t += threads) sums[t] = tile_sum(x, n, t);
    });
  for (auto& th : pool) th.join();

  // The combination of the tile sums: columns of float4s, then two shuffle trees.
  const std::int64_t quads = (tiles + 3) / 4;
  std::array<float, kColumns> columns{};
  for (int j = 0; j < kColumns; ++j) {
    F4 acc;
    for (std::int64_t q = j; q < quads; q += kColumns)
      acc = acc + F4{sums[4 * q], sums[4 * q + 1], sums[4 * q + 2], sums[4 * q + 3]};
    columns[j] = (acc.x + acc.y) + (acc.z + acc.w);
  }
  std::array<float, 32> groups{};
  for (int g = 0; g < kColumns / 32; ++g) {
    std::array<float, 32> v;
    std::copy(columns.begin() + 32 * g, columns.begin() + 32 * g + 32, v.begin());
    groups[g] = warp_tree(v);
  }
  return warp_tree(groups);
}

}  // namespace step14
