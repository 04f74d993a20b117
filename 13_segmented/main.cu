// 13_segmented's executable: generates (or reads) the segments, checks the offsets, runs the suite's
// segmented sum and cub::DeviceSegmentedReduce::Sum on the same input, checks every segment of every
// run, and reports both timings. Exit codes as every step: 0 correct, 1 wrong or CUDA error, 2 bad
// usage, 77 no usable GPU.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "device.cuh"
#include "input.hpp"
#include "options.hpp"
#include "report.hpp"
#include "segmented.cuh"
#include "segments.hpp"

namespace {

constexpr const char* kName = "13_segmented";

struct SegOptions {
  reduce::Options base;
  std::string segments = "powerlaw";
  std::string offsets_file;  // --offsets FILE instead of a distribution
};

std::string usage() {
  std::string u = std::string("usage: ") + kName + " [options]\n" +
                  "Sums S segments of n floats, given by 64-bit offsets, into S outputs; times the suite's kernel\n"
                  "and cub::DeviceSegmentedReduce::Sum on the same input.\n"
                  "  --segments NAME  the distribution of segment lengths over n floats        [powerlaw]\n";
  for (const seg::Distribution& d : seg::distributions())
    u += "                     " + std::string(d.name) + std::string(12 - std::strlen(d.name), ' ') + d.description + "\n";
  u += "  --offsets FILE   S + 1 integers (white space between) instead of --segments\n"
       "  --n COUNT        floats in the array: 1000, 4K, 16M, 1G or 2^k                [2^26]\n"
       "  --iters N        timed runs of each launcher (median, min, max)               [50]\n"
       "  --warmup N       untimed runs first                                           [5]\n"
       "  --seed N         seed of the input and of the distribution                    [1]\n"
       "  --pattern P      constant, int (exact check), uniform, mixed                  [uniform]\n"
       "  --format F       text or json (one record)                                    [text]\n"
       "  --device N       CUDA device ordinal                                          [0]\n"
       "  --help\n";
  return u;
}

SegOptions parse(int argc, char** argv) {
  SegOptions o;
  std::vector<std::string> rest;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], value;
    const auto eq = a.find('=');
    const std::string name = a.substr(0, eq);
    if (name != "--segments" && name != "--offsets") {
      rest.push_back(a);
      continue;
    }
    if (eq != std::string::npos) value = a.substr(eq + 1);
    else if (i + 1 < argc) value = argv[++i];
    else throw reduce::UsageError("missing value for " + name);
    (name == "--segments" ? o.segments : o.offsets_file) = value;
    if (name == "--segments" && !seg::find_distribution(value)) seg::make_offsets(value, 0, 0);  // throws the message
  }
  o.base = reduce::parse_options(rest);
  if (o.base.block_given) throw reduce::UsageError("--block: 13_segmented chooses its own launch shape");
  if (o.base.format == reduce::Format::csv) throw reduce::UsageError("--format csv: 13_segmented prints text or json");
  return o;
}

// One launcher's runs: warm-up, then timed runs (L2 flushed before each, events around the launch
// only). Every run's output is poisoned with NaN first and compared bit for bit with the first run's.
struct Runs {
  reduce::Summary ms;
  std::vector<float> first;   // the first run's outputs
  bool identical = true;      // every run gave the same bits
};

template <typename Launch>
Runs run_all(Launch launch, float* out, std::int64_t segments, const reduce::Options& opt, reduce::L2Flusher& flusher,
             cudaStream_t stream) {
  Runs r;
  r.first.resize(segments);
  std::vector<float> again(segments);
  std::vector<double> ms;
  reduce::Event start, stop;
  const std::size_t bytes = segments * sizeof(float);
  for (int i = 0; i < opt.warmup + opt.iters; ++i) {
    const bool timed = i >= opt.warmup;
    if (bytes > 0) CUDA_CHECK(cudaMemsetAsync(out, 0xFF, bytes, stream));  // NaN: a segment left unwritten fails
    if (timed) flusher.flush(stream);
    CUDA_CHECK(cudaEventRecord(start.get(), stream));
    CUDA_CHECK(launch());
    CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    if (bytes > 0)
      CUDA_CHECK(cudaMemcpyAsync(i == 0 ? r.first.data() : again.data(), out, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    float t = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&t, start.get(), stop.get()));
    if (timed) ms.push_back(t);
    if (i > 0 && std::memcmp(again.data(), r.first.data(), bytes) != 0) r.identical = false;
  }
  r.ms = reduce::summarize(ms);
  return r;
}

// The record's numbers: round-trip precision, null where not finite (the harness's JSON rule).
std::string number(double v) { return reduce::json_number(v); }

int run(const SegOptions& so) {
  const reduce::Options& opt = so.base;
  const std::int64_t n = opt.n;
  const seg::Offsets offsets =
      so.offsets_file.empty() ? seg::make_offsets(so.segments, n, opt.seed) : seg::read_offsets(so.offsets_file);
  seg::validate_offsets(offsets, n);  // before anything runs
  const std::string distribution = so.offsets_file.empty() ? so.segments : "file:" + so.offsets_file;
  const std::int64_t segments = static_cast<std::int64_t>(offsets.size()) - 1;
  const std::int64_t covered = offsets.back() - offsets.front();
  // Bytes counted: the floats inside segments once, and the S + 1 offsets once (CUB reads begin and end
  // offsets, the suite's kernel reads most of them twice; both from cache). Outputs are not counted.
  const double bytes = 4.0 * covered + 8.0 * (segments + 1);

  const reduce::DeviceInfo device = reduce::open_device(opt.device);
  const std::size_t scratch_bytes = seg::scratch_bytes(n), cub_bytes = seg::cub_scratch_bytes(segments);
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t needed = n * sizeof(float) + offsets.size() * 8 + 2 * segments * sizeof(float) + scratch_bytes +
                             cub_bytes + 2 * device.l2_bytes + (64 << 20);
  if (needed > free_bytes)
    throw reduce::NoUsableDevice("this run needs " + std::to_string(needed / 1000000) + " MB of device memory and " +
                                 std::to_string(free_bytes / 1000000) + " MB are free; use a smaller --n");

  std::unique_ptr<float[]> host(new float[std::max<std::int64_t>(n, 1)]);
  reduce::fill_input(host.get(), n, opt.pattern, opt.seed);

  reduce::Stream stream;
  reduce::DeviceBuffer<float> in(n), out(segments), cub_out(segments);
  reduce::DeviceBuffer<std::int64_t> d_offsets(offsets.size());
  reduce::DeviceBuffer<unsigned char> scratch(scratch_bytes), cub_scratch(cub_bytes);
  reduce::L2Flusher flusher(device);
  CUDA_CHECK(cudaMemcpy(in.get(), host.get(), in.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_offsets.get(), offsets.data(), d_offsets.bytes(), cudaMemcpyHostToDevice));

  const Runs mine = run_all(
      [&] {
        return seg::launch(in.get(), n, d_offsets.get(), segments, out.get(), {scratch.get(), scratch.bytes()},
                           stream.get());
      },
      out.get(), segments, opt, flusher, stream.get());
  const Runs cub = run_all(
      [&] { return seg::launch_cub(in.get(), d_offsets.get(), segments, cub_out.get(), {cub_scratch.get(), cub_scratch.bytes()}, stream.get()); },
      cub_out.get(), segments, opt, flusher, stream.get());

  const seg::SegmentsCheck check = seg::check_segments(host.get(), offsets, mine.first.data(), opt.pattern);
  const seg::SegmentsCheck cub_check = seg::check_segments(host.get(), offsets, cub.first.data(), opt.pattern);
  const bool unchanged = reduce::device_equals_host(in.get(), host.get(), n);
  const bool passed = check.wrong == 0 && mine.identical && unchanged;
  if (!unchanged) std::fprintf(stderr, "%s: the input was modified\n", kName);
  if (check.wrong > 0)
    std::fprintf(stderr, "%s: %lld of %lld segments wrong; first: segment %lld [%lld, %lld) gave %.9g, reference %.9g "
                         "(|error| %.3g, allowed %.3g)\n",
                 kName, static_cast<long long>(check.wrong), static_cast<long long>(segments),
                 static_cast<long long>(check.first_wrong), static_cast<long long>(offsets[check.first_wrong]),
                 static_cast<long long>(offsets[check.first_wrong + 1]), static_cast<double>(check.first_gpu),
                 check.first_reference, check.first_check.abs_error, check.first_check.tolerance);
  if (!mine.identical) std::fprintf(stderr, "%s: repeated runs gave different bits\n", kName);
  if (cub_check.wrong > 0 || !cub.identical)
    std::fprintf(stderr, "%s: note: CUB's result %s\n", kName,
                 cub_check.wrong > 0 ? "failed the same check" : "differed between runs");

  auto gbps = [&](double ms) { return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0.0; };
  const double my_gbps = gbps(mine.ms.median), cub_gbps = gbps(cub.ms.median);
  const double vs_cub = mine.ms.median > 0 ? cub.ms.median / mine.ms.median : 0.0;
  const double pct_peak = device.peak_gbps > 0 ? 100.0 * my_gbps / device.peak_gbps : 0.0;
  // Segments by the length bounds of the tiers (segmented.cu): a segment of up to 32 floats goes to a
  // thread when all 32 of its batch do, else to a warp; then warp, block, several blocks by length.
  std::int64_t tier[4] = {0, 0, 0, 0};
  for (std::int64_t s = 0; s < segments; ++s) {
    const std::int64_t len = offsets[s + 1] - offsets[s];
    ++tier[len <= seg::kThreadMax ? 0 : len <= seg::kWarpMax ? 1 : len <= seg::kTile ? 2 : 3];
  }
  const double mean_len = segments > 0 ? static_cast<double>(covered) / segments : 0.0;

  if (opt.format == reduce::Format::json) {
    std::printf("{\"step\": \"%s\", \"device\": %s, \"n\": %lld, \"segments\": %lld, \"distribution\": %s, "
                "\"pattern\": \"%s\", \"seed\": %llu, \"mean_len\": %s, \"bytes\": %.0f, \"iters\": %d, \"warmup\": %d, "
                "\"median_ms\": %s, \"min_ms\": %s, \"max_ms\": %s, \"gbps\": %s, \"cub_median_ms\": %s, "
                "\"cub_min_ms\": %s, \"cub_max_ms\": %s, \"cub_gbps\": %s, \"vs_cub\": %s, \"peak_gbps\": %s, "
                "\"pct_peak\": %s, \"passed\": %s, \"runs_identical\": %s, \"wrong_segments\": %lld, \"exact_check\": %s, "
                "\"cub_passed\": %s, \"cub_runs_identical\": %s, \"len_le_32\": %lld, \"len_le_2048\": %lld, "
                "\"len_le_16384\": %lld, \"len_longer\": %lld, \"input_unchanged\": %s, \"cuda_runtime\": %d, \"cuda_driver\": %d}\n",
                kName, reduce::json_string(device.name).c_str(), static_cast<long long>(n), static_cast<long long>(segments),
                reduce::json_string(distribution).c_str(), reduce::to_string(opt.pattern), static_cast<unsigned long long>(opt.seed),
                number(mean_len).c_str(), bytes, opt.iters, opt.warmup, number(mine.ms.median).c_str(),
                number(mine.ms.min).c_str(), number(mine.ms.max).c_str(), number(my_gbps).c_str(), number(cub.ms.median).c_str(),
                number(cub.ms.min).c_str(), number(cub.ms.max).c_str(), number(cub_gbps).c_str(), number(vs_cub).c_str(),
                number(device.peak_gbps).c_str(), number(pct_peak).c_str(), passed ? "true" : "false",
                mine.identical ? "true" : "false", static_cast<long long>(check.wrong), check.exact ? "true" : "false",
                cub_check.wrong == 0 ? "true" : "false", cub.identical ? "true" : "false",
                static_cast<long long>(tier[0]), static_cast<long long>(tier[1]), static_cast<long long>(tier[2]),
                static_cast<long long>(tier[3]), unchanged ? "true" : "false", device.runtime_version,
                device.driver_version);
  } else {
    std::printf("%s: %s, %d SMs, theoretical %.0f GB/s\n", kName, device.name.c_str(), device.sm_count,
                device.peak_gbps);
    std::printf("  input: n = %s floats, %s, seed %llu; %lld segments (%s), mean length %.1f\n",
                reduce::format_count(n).c_str(), reduce::to_string(opt.pattern),
                static_cast<unsigned long long>(opt.seed), static_cast<long long>(segments), distribution.c_str(),
                mean_len);
    std::printf("  segments of length <= 32: %lld, <= 2048: %lld, <= 16384: %lld, longer: %lld\n",
                static_cast<long long>(tier[0]), static_cast<long long>(tier[1]), static_cast<long long>(tier[2]),
                static_cast<long long>(tier[3]));
    std::printf("  suite: median %.4f ms (min %.4f, max %.4f), %.1f GB/s, %.1f%% of theoretical\n", mine.ms.median,
                mine.ms.min, mine.ms.max, my_gbps, pct_peak);
    std::printf("  CUB:   median %.4f ms (min %.4f, max %.4f), %.1f GB/s; suite / CUB = %.2fx\n", cub.ms.median,
                cub.ms.min, cub.ms.max, cub_gbps, vs_cub);
    std::printf("  bytes: 4 per float in a segment + 8 per offset = %.0f; median of %d runs, L2 flushed before each\n",
                bytes, opt.iters);
    std::printf("  check: %lld of %lld segments wrong (%s), runs %s\n%s\n", static_cast<long long>(check.wrong),
                static_cast<long long>(segments), check.exact ? "exact" : "per-segment tolerance",
                mine.identical ? "bitwise identical" : "DIFFERED", passed ? "PASS" : "FAIL");
  }
  return passed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const SegOptions so = parse(argc, argv);
    if (so.base.help) {
      std::cout << usage();
      return 0;
    }
    return run(so);
  } catch (const reduce::UsageError& e) {
    std::fprintf(stderr, "%s: %s\n", kName, e.what());
    return 2;
  } catch (const reduce::NoUsableDevice& e) {
    std::fprintf(stderr, "%s: no usable CUDA device: %s\n", kName, e.what());
    return 77;
  } catch (const reduce::CudaError& e) {
    const bool unsupported = reduce::is_unsupported_device_error(e.code());
    std::fprintf(stderr, "%s: %s: %s\n", kName, unsupported ? "no usable CUDA device" : "CUDA error", e.what());
    return unsupported ? 77 : 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: no usable machine: not enough host memory for this --n\n", kName);
    return 77;
  }
}
