// The read ceiling: how fast a kernel that only reads can stream n floats from DRAM on this GPU.
//
// Not a step: nothing is summed to one value, so there is no result to check. The kernel is
// perf/read_tiles.cuh's at 512 threads x 8 float4 loads, one of the fastest read-only shapes measured
// on the H200 (perf/variants.cu's set `tiles`); the table reports every step as a share of it, beside
// the share of the theoretical peak. A program of the engine (run_bench) like the steps: the same
// options, timing (L2 flushed before every run, events around the launch only) and record, whose
// step is "read_ceiling".
// Usage: ./read_ceiling [--n 2^26] [--iters 50] [--format text|csv|json] [--device 0]
#include <algorithm>
#include <vector>

#include "device.cuh"
#include "harness.cuh"
#include "read_tiles.cuh"

namespace {

constexpr int kBlock = 512;
constexpr int kLoads = 8;
constexpr std::int64_t kTile = std::int64_t{kBlock} * kLoads;  // float4s per block

void measure(const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
  const std::int64_t vectors = reduce::ceil_div(opt.n, 4);
  const std::int64_t blocks = std::max<std::int64_t>(reduce::ceil_div(vectors, kTile), 1);
  reduce::fits_on_device(vectors, 16, blocks * 4, device);
  reduce::DeviceBuffer<float4> in(std::max<std::int64_t>(vectors, 1));
  reduce::DeviceBuffer<float> sink(blocks);
  reduce::L2Flusher flusher(device);
  reduce::Stream stream;
  CUDA_CHECK(cudaMemsetAsync(in.get(), 0, in.bytes(), stream.get()));

  const std::vector<double> ms = reduce::time_runs(opt.warmup, opt.iters, flusher, stream.get(), [&](int) {
    read_tiles<kBlock, kLoads>
        <<<static_cast<unsigned>(blocks), kBlock, 0, stream.get()>>>(in.get(), vectors, sink.get());
    CUDA_CHECK(cudaGetLastError());
  });
  reduce::Report r = reduce::fill_common(emit, opt, device);
  reduce::fill_timing(r, reduce::summarize(ms), /*identical=*/true, reduce::LaunchShape{blocks, kBlock, 1});
  // Nothing to check: every run counts as correct, and the record passes when it timed something.
  r.runs_correct = r.runs_total;
  r.exact_check = true;
  r.extra = {reduce::text_field("input", "zeros"), reduce::number_field("loads_per_thread", kLoads),
             reduce::text_field("check", "none: it only reads")};
  reduce::finish(r, /*input_unchanged=*/true);
  emit(r);
}

reduce::Bench make_bench() {
  reduce::Bench b{"read_ceiling", "a kernel that only reads: the DRAM read bandwidth a reduction can reach"};
  b.spec.summary =
      "Times the read-only streaming kernel of perf/read_tiles.cuh (512 threads x 8 float4 loads per\n"
      "block) on n zero floats";
  b.spec.method = "nothing is checked: the kernel only reads. Timed like a step (L2 flushed before every timed run).";
  b.spec.block = reduce::BlockRule::always(
      kBlock, "read_ceiling's shape is fixed (512 threads x 8 float4 loads, perf/read_ceiling.cu)");
  b.spec.refused = {{"--seed", "read_ceiling reads zeros; there is no input to generate"},
                    {"--pattern", "read_ceiling reads zeros; nothing is summed or checked"},
                    {"--cpu-runs", "read_ceiling has no CPU yardstick"}};
  b.measure = measure;
  return b;
}

}  // namespace

int main(int argc, char** argv) { return reduce::run_bench(make_bench(), argc, argv); }
