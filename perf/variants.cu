// Experiments behind PERF_NOTES.md, each a small set of rows timed like the harness times a step
// (L2 flushed before every run, events around the launch only, median of the runs). Not part of the
// suite or its tests; built with -DREDUCE_BUILD_PERF=ON as bin/perf/perf_variants.
//   atomics   step 00's lesson: one atomic per element into a float or a double, against
//             warp-aggregated atomics (a shuffle sum per warp, one atomic per warp); time and error
//   latency   one thread chasing pointers through a buffer far larger than L2: DRAM latency, the
//             number Little's law needs (bytes in flight = bandwidth x latency)
//   tiles     the read-only one-tile-per-block kernel (perf/read_ceiling.cu) at every block size and
//             number of float4 loads per thread: what step 10 and the read ceiling choose from
//   perf_variants SET [log2 n ...]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "device.cuh"
#include "harness.cuh"
#include "input.hpp"
#include "read_tiles.cuh"

namespace {

using reduce::DeviceBuffer;

// Median milliseconds of `runs` launches after one warm-up, each after an L2 flush (the harness's way).
double time_ms(reduce::L2Flusher& flusher, cudaStream_t stream, int runs, const std::function<void()>& launch) {
  return reduce::summarize(reduce::time_runs(1, runs, flusher, stream, [&](int) {
    launch();
    CUDA_CHECK(cudaGetLastError());
  })).median;
}

// ---------------------------------------------------------------------------------------------
// Set atomics.
template <typename Acc>
__global__ void atomic_per_element(const float* in, std::int64_t n, Acc* total) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(total, static_cast<Acc>(in[i]));
}

template <typename Acc>
__global__ void atomic_per_warp(const float* in, std::int64_t n, Acc* total) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(total, static_cast<Acc>(v));
}

template <typename Acc>
void atomics_row(const char* name, void (*kernel)(const float*, std::int64_t, Acc*), const float* in,
                 std::int64_t n, const reduce::Reference& ref, reduce::L2Flusher& flusher, cudaStream_t stream) {
  DeviceBuffer<Acc> total(1);
  const unsigned blocks = static_cast<unsigned>(std::max<std::int64_t>(reduce::ceil_div(n, 256), 1));
  const double ms = time_ms(flusher, stream, 10, [&] {
    CUDA_CHECK(cudaMemsetAsync(total.get(), 0, sizeof(Acc), stream));
    kernel<<<blocks, 256, 0, stream>>>(in, n, total.get());
  });
  Acc got{};
  CUDA_CHECK(cudaMemcpy(&got, total.get(), sizeof(Acc), cudaMemcpyDeviceToHost));
  const double rel = ref.sum != 0 ? std::fabs(static_cast<double>(got) - ref.sum) / std::fabs(ref.sum) : 0.0;
  std::printf("%-28s %8.3f ms %10.1f GB/s %12.3e adds/s  result %.9g  rel. error %.2e\n", name, ms,
              n * 4.0 / (ms * 1e6), n / (ms * 1e-3), static_cast<double>(got), rel);
}

void set_atomics(const std::vector<int>& logs, reduce::L2Flusher& flusher, cudaStream_t stream) {
  for (reduce::Pattern p : {reduce::Pattern::constant, reduce::Pattern::uniform}) {
    for (int k : logs) {
      const std::int64_t n = std::int64_t{1} << k;
      std::vector<float> host(n);
      reduce::fill_input(host.data(), n, p, 1);
      const reduce::Reference ref = reduce::reference_sum(host.data(), n);
      DeviceBuffer<float> in(n);
      CUDA_CHECK(cudaMemcpy(in.get(), host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
      std::printf("atomics n = 2^%d, pattern %s, reference %.9g\n", k, reduce::to_string(p), ref.sum);
      atomics_row<float>("  per element, float", atomic_per_element<float>, in.get(), n, ref, flusher, stream);
      atomics_row<double>("  per element, double (00)", atomic_per_element<double>, in.get(), n, ref, flusher, stream);
      atomics_row<float>("  per warp, float", atomic_per_warp<float>, in.get(), n, ref, flusher, stream);
      atomics_row<double>("  per warp, double", atomic_per_warp<double>, in.get(), n, ref, flusher, stream);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Set latency: next[i] holds the index of the next node; nodes 4 KB apart, in a random cycle.
__global__ void chase(const unsigned* next, int steps, unsigned* sink) {
  unsigned i = 0;
  for (int s = 0; s < steps; ++s) i = next[i];
  *sink = i;
}

void set_latency(reduce::L2Flusher& flusher, cudaStream_t stream, const reduce::DeviceInfo& device) {
  constexpr std::int64_t kStride = 1024;  // unsigneds: 4 KB between nodes
  const std::int64_t nodes = std::max<std::int64_t>(16 * device.l2_bytes / (kStride * 4), 1 << 14);
  std::vector<unsigned> order(nodes);
  for (std::int64_t i = 0; i < nodes; ++i) order[i] = static_cast<unsigned>(i);
  std::srand(7);
  for (std::int64_t i = nodes - 1; i > 0; --i) std::swap(order[i], order[std::rand() % (i + 1)]);
  std::vector<unsigned> next(nodes * kStride, 0);
  for (std::int64_t i = 0; i < nodes; ++i) next[order[i] * kStride] = order[(i + 1) % nodes] * kStride;
  DeviceBuffer<unsigned> d(next.size()), sink(1);
  CUDA_CHECK(cudaMemcpy(d.get(), next.data(), next.size() * 4, cudaMemcpyHostToDevice));
  for (int steps : {2000, 8000}) {
    const double ms = time_ms(flusher, stream, 5, [&] { chase<<<1, 1, 0, stream>>>(d.get(), steps, sink.get()); });
    std::printf("latency: %d dependent loads over %.0f MB (4 KB apart): %.0f ns per load\n", steps,
                next.size() * 4 / 1e6, ms * 1e6 / steps);
  }
}

// ---------------------------------------------------------------------------------------------
// Set tiles: perf/read_tiles.cuh's kernel (perf/read_ceiling.cu's) at every shape.
template <int Block, int Loads>
void tiles_cell(const float4* in, std::int64_t vectors, float* sink, reduce::L2Flusher& flusher, cudaStream_t stream) {
  const std::int64_t blocks = std::max<std::int64_t>(reduce::ceil_div(vectors, std::int64_t{Block} * Loads), 1);
  const double ms = time_ms(flusher, stream, 20, [&] {
    read_tiles<Block, Loads><<<static_cast<unsigned>(blocks), Block, 0, stream>>>(in, vectors, sink);
  });
  std::printf(" %7.0f", vectors * 16.0 / (ms * 1e6));
}

template <int Block>
void tiles_row(const float4* in, std::int64_t vectors, float* sink, reduce::L2Flusher& flusher, cudaStream_t stream) {
  std::printf("  block %4d:", Block);
  tiles_cell<Block, 1>(in, vectors, sink, flusher, stream);
  tiles_cell<Block, 2>(in, vectors, sink, flusher, stream);
  tiles_cell<Block, 4>(in, vectors, sink, flusher, stream);
  tiles_cell<Block, 8>(in, vectors, sink, flusher, stream);
  tiles_cell<Block, 16>(in, vectors, sink, flusher, stream);
  std::printf("\n");
}

void set_tiles(const std::vector<int>& logs, reduce::L2Flusher& flusher, cudaStream_t stream) {
  for (int k : logs) {
    const std::int64_t vectors = (std::int64_t{1} << k) / 4;
    DeviceBuffer<float4> in(vectors);
    DeviceBuffer<float> sink(vectors);
    CUDA_CHECK(cudaMemset(in.get(), 0, in.bytes()));
    std::printf("tiles n = 2^%d floats, GB/s, one tile per block; columns: float4 loads per thread 1 2 4 8 16\n", k);
    tiles_row<128>(in.get(), vectors, sink.get(), flusher, stream);
    tiles_row<256>(in.get(), vectors, sink.get(), flusher, stream);
    tiles_row<512>(in.get(), vectors, sink.get(), flusher, stream);
    tiles_row<1024>(in.get(), vectors, sink.get(), flusher, stream);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string set = argc > 1 ? argv[1] : "";
  std::vector<int> logs;
  for (int i = 2; i < argc; ++i) logs.push_back(std::atoi(argv[i]));
  if (set != "atomics" && set != "latency" && set != "tiles") {
    std::fprintf(stderr, "usage: perf_variants atomics|latency|tiles [log2 n ...]\n");
    return 2;
  }
  try {
    const reduce::DeviceInfo device = reduce::open_device(0);
    reduce::L2Flusher flusher(device);
    reduce::Stream stream;
    std::printf("set %s: %s, %d SMs, %.1f MB L2, theoretical %.0f GB/s\n", set.c_str(), device.name.c_str(),
                device.sm_count, device.l2_bytes / 1e6, device.peak_gbps);
    if (set == "atomics") set_atomics(logs.empty() ? std::vector<int>{20, 24, 26} : logs, flusher, stream.get());
    if (set == "latency") set_latency(flusher, stream.get(), device);
    if (set == "tiles") set_tiles(logs.empty() ? std::vector<int>{20, 23, 26, 28, 30} : logs, flusher, stream.get());
    return 0;
  } catch (const reduce::NoUsableDevice& e) {
    std::fprintf(stderr, "perf_variants: no usable CUDA device: %s\n", e.what());
    return 77;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "perf_variants: %s\n", e.what());
    return 1;
  }
}
