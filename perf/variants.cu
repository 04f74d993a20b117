// Experiments behind PERF_NOTES.md: variants of step 07's streaming loop and launch shape, timed like
// the harness does (L2 flushed before every run, events around the launch, median), beside CUB.
// Not part of the suite; built only as the target perf_variants.
//   perf_variants [log2 n ...]     default: -1 (n = 0) 10 16 20 22 24 26 28 30; needs sm_80 or newer
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "device.cuh"
#include "input.hpp"

namespace cg = cooperative_groups;
using reduce::DeviceBuffer;

enum class Layout { grid_stride, block_tile };
enum class Load { plain, streaming, l2_256 };
enum class Finish { grid_sync, last_block, none };

template <Load L>
__device__ float4 load4(const float4* p) {
  if constexpr (L == Load::streaming) {
    return __ldcs(p);
  } else if constexpr (L == Load::l2_256) {
    float4 r;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
        : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w) : "l"(p));
    return r;
  } else {
    return *p;
  }
}

__device__ unsigned g_done = 0;  // blocks finished, for Finish::last_block (reset by the last block)

template <unsigned Block>
__device__ float block_sum(const cg::thread_block& block, float v) {
  constexpr unsigned kWarps = Block / 32;
  __shared__ float warp_sums[kWarps];
  const auto warp = cg::tiled_partition<32>(block);
  v = cg::reduce(warp, v, cg::plus<float>());
  if constexpr (kWarps == 1) return v;
  if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = v;
  block.sync();
  if (warp.meta_group_rank() == 0)
    v = cg::reduce(warp, warp.thread_rank() < kWarps ? warp_sums[warp.thread_rank()] : 0.0f, cg::plus<float>());
  return v;
}

// n a multiple of 4 and in 16-byte aligned: the experiments measure the body only.
template <unsigned Block, int U, Layout Lay, Load L, Finish F>
__global__ void __launch_bounds__(Block) variant(const float* __restrict__ in, std::int64_t n, float* partial, float* out) {
  const auto grid = cg::this_grid();
  const auto block = cg::this_thread_block();
  const float4* body = reinterpret_cast<const float4*>(in);
  const std::int64_t vectors = n / 4;
  float acc[U] = {};
  if constexpr (Lay == Layout::grid_stride) {
    const std::int64_t threads = grid.num_threads();
    std::int64_t v = grid.thread_rank();
    for (; v + (U - 1) * threads < vectors; v += U * threads) {
      float4 x[U];
#pragma unroll
      for (int k = 0; k < U; ++k) x[k] = load4<L>(body + v + k * threads);
#pragma unroll
      for (int k = 0; k < U; ++k) acc[k] += (x[k].x + x[k].y) + (x[k].z + x[k].w);
    }
    for (; v < vectors; v += threads) {
      const float4 x = load4<L>(body + v);
      acc[0] += (x.x + x.y) + (x.z + x.w);
    }
  } else {
    constexpr std::int64_t kTile = std::int64_t{Block} * U;  // vectors per block per round
    const std::int64_t step = kTile * gridDim.x;
    std::int64_t base = blockIdx.x * kTile;
    for (; base + kTile <= vectors; base += step) {
      float4 x[U];
#pragma unroll
      for (int k = 0; k < U; ++k) x[k] = load4<L>(body + base + k * Block + threadIdx.x);
#pragma unroll
      for (int k = 0; k < U; ++k) acc[k] += (x[k].x + x[k].y) + (x[k].z + x[k].w);
    }
    for (std::int64_t v = base + threadIdx.x; v < vectors && v < base + kTile; v += Block) {
      const float4 x = load4<L>(body + v);
      acc[0] += (x.x + x.y) + (x.z + x.w);
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < U; ++k) sum += acc[k];
  sum = block_sum<Block>(block, sum);
  if constexpr (F == Finish::none) {
    if (block.thread_rank() == 0) partial[blockIdx.x] = sum;
    return;
  } else if constexpr (F == Finish::grid_sync) {
    if (block.thread_rank() == 0) partial[blockIdx.x] = sum;
    grid.sync();
    if (blockIdx.x != 0) return;
  } else {
    __shared__ bool last;
    if (block.thread_rank() == 0) {
      partial[blockIdx.x] = sum;
      __threadfence();  // the partial is visible before the count says so
      last = atomicAdd(&g_done, 1u) == gridDim.x - 1;
    }
    block.sync();
    if (!last) return;
    __threadfence();
  }
  float v = 0.0f;
  for (unsigned b = block.thread_rank(); b < gridDim.x; b += Block) v += __ldcg(partial + b);
  v = block_sum<Block>(block, v);
  if (block.thread_rank() == 0) {
    *out = v;
    if constexpr (F == Finish::last_block) g_done = 0;
  }
}

struct Variant {
  std::string name;
  void (*kernel)(const float*, std::int64_t, float*, float*);
  unsigned block;
  int per_block_vectors;
  bool cooperative;
  int blocks_per_sm;  // 0: as many as the occupancy API allows
};

template <unsigned Block, int U, Layout Lay, Load L, Finish F = Finish::grid_sync>
Variant make(const char* name, int blocks_per_sm = 0) {
  return {name, variant<Block, U, Lay, L, F>, Block, static_cast<int>(Block * U), F == Finish::grid_sync, blocks_per_sm};
}

int main(int argc, char** argv) {
  std::vector<int> logs;
  for (int i = 1; i < argc; ++i) logs.push_back(std::atoi(argv[i]));
  if (logs.empty()) logs = {-1, 10, 16, 20, 22, 24, 26, 28, 30};  // -1: n = 0, launch and finish only
  const reduce::DeviceInfo dev = reduce::open_device(0);
  const std::vector<Variant> variants = {
      make<256, 4, Layout::grid_stride, Load::plain>("07 v1: 256 thr, grid-stride, 4 loads"),
      make<512, 4, Layout::block_tile, Load::plain>("512 thr, block tile, 4 loads"),
      make<512, 4, Layout::block_tile, Load::l2_256>("512 thr, tile, 4, .nc L2::256B"),
      make<512, 8, Layout::block_tile, Load::l2_256>("512 thr, tile, 8, .nc L2::256B"),
      make<1024, 4, Layout::block_tile, Load::l2_256>("1024 thr x1/SM, tile, 4, L2::256B", 1),
      make<512, 4, Layout::block_tile, Load::l2_256>("512 thr x2/SM, tile, 4, L2::256B", 2),
      make<512, 4, Layout::block_tile, Load::l2_256, Finish::last_block>("512, tile, 4, 256B, last-block finish"),
      make<512, 4, Layout::block_tile, Load::l2_256, Finish::none>("512, tile, 4, 256B, no finish (timing)"),
      make<256, 4, Layout::block_tile, Load::l2_256, Finish::last_block>("256, tile, 4, 256B, last-block finish"),
  };
  const std::int64_t max_n = std::int64_t{1} << *std::max_element(logs.begin(), logs.end());
  std::printf("GB/s; the n=0 column (log2 n = -1) is microseconds per launch; ! marks a wrong sum\n");
  std::vector<float> host(max_n);
  reduce::fill_input(host.data(), max_n, reduce::Pattern::uniform, 1);
  DeviceBuffer<float> in(max_n), out(1), partial(32 * dev.sm_count);
  CUDA_CHECK(cudaMemcpy(in.get(), host.data(), max_n * 4, cudaMemcpyHostToDevice));
  reduce::L2Flusher flusher(dev);
  reduce::Stream stream;
  std::size_t cub_bytes = 0;
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cub_bytes, in.get(), out.get(), max_n));
  DeviceBuffer<unsigned char> cub_tmp(cub_bytes);
  const int iters = 30;

  auto time = [&](auto&& launch) {
    std::vector<reduce::Event> a(iters), b(iters);
    for (int i = 0; i < 3; ++i) launch();
    for (int i = 0; i < iters; ++i) {
      flusher.flush(stream.get());
      CUDA_CHECK(cudaEventRecord(a[i].get(), stream.get()));
      launch();
      CUDA_CHECK(cudaEventRecord(b[i].get(), stream.get()));
    }
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    std::vector<double> ms;
    for (int i = 0; i < iters; ++i) {
      float t;
      CUDA_CHECK(cudaEventElapsedTime(&t, a[i].get(), b[i].get()));
      ms.push_back(t);
    }
    return reduce::summarize(ms).median;
  };

  std::printf("%-44s", "GB/s (median of 30, cold L2)  log2 n:");
  for (int k : logs) std::printf("%8d", k);
  std::printf("\n");
  for (const Variant& v : variants) {
    std::printf("%-44s", v.name.c_str());
    for (int k : logs) {
      std::int64_t n = k < 0 ? 0 : std::int64_t{1} << k;
      int per_sm = v.blocks_per_sm;
      if (!per_sm) CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.kernel, v.block, 0));
      const int blocks = static_cast<int>(std::min<std::int64_t>(per_sm * dev.sm_count,
                                                                 std::max<std::int64_t>(1, n / 4 / v.per_block_vectors)));
      CUDA_CHECK(cudaMemset(out.get(), 0xFF, sizeof(float)));  // NaN: a variant that writes no sum shows "!"
      const float* inp = in.get();
      float* part = partial.get();
      float* o = out.get();
      void* args[] = {&inp, &n, &part, &o};
      const double ms = time([&] {
        if (v.cooperative)
          CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(v.kernel), blocks, v.block, args, 0,
                                                 stream.get()));
        else
          CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(v.kernel), blocks, v.block, args, 0, stream.get()));
      });
      float got;
      CUDA_CHECK(cudaMemcpy(&got, out.get(), 4, cudaMemcpyDeviceToHost));
      const double ref = reduce::reference_sum(host.data(), n).sum;
      if (n == 0) std::printf("%7.2fus", ms * 1e3);
      else std::printf("%8.0f%s", n * 4 / ms / 1e6, !(std::abs(got - ref) <= 1e-3 * ref) ? "!" : "");
    }
    std::printf("\n");
  }
  std::printf("%-44s", "cub::DeviceReduce::Sum");
  for (int k : logs) {
    const std::int64_t n = k < 0 ? 0 : std::int64_t{1} << k;
    std::size_t bytes = cub_bytes;
    const double ms = time([&] { CUDA_CHECK(cub::DeviceReduce::Sum(cub_tmp.get(), bytes, in.get(), out.get(), n, stream.get())); });
    if (n == 0) std::printf("%7.2fus", ms * 1e3);
    else std::printf("%8.0f", n * 4 / ms / 1e6);
  }
  std::printf("\n");
  return 0;
}
