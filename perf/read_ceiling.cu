// The read ceiling: how fast a kernel that only reads can stream n floats from DRAM on this GPU.
//
// Not a step: nothing is summed to one value, so there is no result to check. The kernel is
// perf/read_tiles.cuh's at 512 threads x 8 float4 loads, one of the fastest read-only shapes measured
// on the H200 (the set `tiles`, PERF_NOTES.md); the table reports every step as a share of it, beside
// the share of the theoretical peak. Timed like the steps: L2 flushed before
// every run, events around the launch only, median of --iters runs.
// Usage: ./read_ceiling [--n 2^26] [--iters 50] [--format text|json] [--device 0]
#include <cstdio>
#include <iostream>
#include <vector>

#include "device.cuh"
#include "harness.cuh"
#include "options.hpp"
#include "read_tiles.cuh"

namespace {

constexpr int kBlock = 512;
constexpr int kLoads = 8;
constexpr std::int64_t kTile = std::int64_t{kBlock} * kLoads;  // float4s per block

int run(const reduce::Options& opt) {
  const reduce::DeviceInfo device = reduce::open_device(opt.device);
  const std::int64_t vectors = reduce::ceil_div(opt.n, 4);
  const std::int64_t blocks = std::max<std::int64_t>(reduce::ceil_div(vectors, kTile), 1);
  reduce::DeviceBuffer<float4> in(std::max<std::int64_t>(vectors, 1));
  reduce::DeviceBuffer<float> sink(blocks);
  reduce::L2Flusher flusher(device);
  reduce::Stream stream;
  CUDA_CHECK(cudaMemsetAsync(in.get(), 0, in.bytes(), stream.get()));

  const std::vector<double> ms = reduce::time_runs(opt.warmup, opt.iters, flusher, stream.get(), [&](int) {
    read_tiles<kBlock, kLoads><<<static_cast<unsigned>(blocks), kBlock, 0, stream.get()>>>(in.get(), vectors, sink.get());
    CUDA_CHECK(cudaGetLastError());
  });
  const reduce::Summary s = reduce::summarize(ms);
  const double bytes = static_cast<double>(opt.n) * sizeof(float);
  const double gbps = s.median > 0 ? bytes / (s.median * 1e-3) / 1e9 : 0.0;
  const double pct = device.peak_gbps > 0 ? 100.0 * gbps / device.peak_gbps : 0.0;
  if (opt.format == reduce::Format::json) {
    std::printf("{\"tool\": \"read_ceiling\", \"device\": %s, \"n\": %lld, \"bytes\": %.0f, \"median_ms\": %.6g, "
                "\"min_ms\": %.6g, \"max_ms\": %.6g, \"gbps\": %.6g, \"pct_peak\": %.6g, \"peak_gbps\": %.6g, "
                "\"iters\": %d, \"block\": %d, \"grid\": %lld, \"loads_per_thread\": %d}\n",
                reduce::json_string(device.name).c_str(), static_cast<long long>(opt.n), bytes, s.median, s.min, s.max, gbps, pct,
                device.peak_gbps, opt.iters, kBlock, static_cast<long long>(blocks), kLoads);
  } else {
    std::printf("read_ceiling: %s, n = %s floats, grid %lld x block %d x %d float4 loads per thread\n"
                "  median %.4f ms (min %.4f, max %.4f): %.1f GB/s read, %.1f%% of theoretical %.0f GB/s\n",
                device.name.c_str(), reduce::format_count(opt.n).c_str(), static_cast<long long>(blocks), kBlock,
                kLoads, s.median, s.min, s.max, gbps, pct, device.peak_gbps);
  }
  return 0;
}

// The one command line, less what means nothing here: each refused option says why.
reduce::OptionSpec spec() {
  reduce::OptionSpec s;
  s.block = reduce::BlockRule::always(kBlock, "read_ceiling's shape is fixed (512 threads x 8 float4 loads, perf/read_ceiling.cu)");
  s.refused = {{"--seed", "read_ceiling reads zeros; there is no input to generate"},
               {"--pattern", "read_ceiling reads zeros; nothing is summed or checked"},
               {"--cpu-runs", "read_ceiling has no CPU yardstick"}};
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  reduce::Options opt;
  return reduce::guarded_main("read_ceiling", opt.n, [&] {
    const reduce::OptionSpec s = spec();
    opt = reduce::parse_options(argc, argv, s);
    if (opt.help) {
      std::cout << "usage: read_ceiling [--n COUNT] [--iters N] [--warmup N] [--format text|json] [--device N]\n"
                   "Times the read-only streaming kernel of perf/read_tiles.cuh (" << kBlock << " threads x " << kLoads
                << " float4 loads per block) on n zero floats,\nL2 flushed before every timed run; nothing to check.\n"
                   "COUNT as the steps take it (1000, 4K, 16M, 2^26); exit codes 0, 2 bad usage, 77 no usable GPU.\n"
                << "Refused here: --block (" << s.block.reason << ")";
      for (const auto& [name, why] : s.refused) std::cout << ", " << name << " (" << why << ")";
      std::cout << ".\n";
      return 0;
    }
    if (opt.format == reduce::Format::csv) throw reduce::UsageError("--format csv: read_ceiling prints text or json");
    return run(opt);
  });
}
