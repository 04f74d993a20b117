#include "harness.cuh"

#include <algorithm>
#include <chrono>
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

namespace reduce {
namespace {

Report measure(const Step& step, const Options& opt, const DeviceInfo& device) {
  const std::int64_t n = opt.n;
  const LaunchConfig cfg{opt.block, device.ordinal, device.sm_count};
  const int runs = opt.warmup + opt.iters;
  const std::size_t scratch_bytes = step.scratch_bytes(n, cfg);
  ensure_device_memory(n * sizeof(float) + scratch_bytes + 2 * device.l2_bytes + (64 << 20));

  // Host side: input, reference, baseline.
  std::unique_ptr<float[]> host(new float[std::max<std::int64_t>(n, 1)]);
  fill_input(host.get(), n, opt.pattern, opt.seed);
  const Reference ref = reference_sum(host.get(), n);
  float cpu_result = 0.0f;
  const double cpu_ms = time_cpu_sum(host.get(), n, opt.cpu_runs, &cpu_result);
  int cpu_threads = 0;
  const double cpu_parallel_ms = time_cpu_sum_parallel(host.get(), n, opt.cpu_runs, &cpu_result, &cpu_threads);

  // Device side: everything allocated before the first timed run.
  Stream stream;
  DeviceBuffer<float> in(n);
  DeviceBuffer<unsigned char> scratch(scratch_bytes);
  L2Flusher flusher(device);
  CUDA_CHECK(cudaMemcpyAsync(in.get(), host.get(), in.bytes(), cudaMemcpyHostToDevice, stream.get()));
  CUDA_CHECK(cudaMemsetAsync(scratch.get(), 0, scratch.bytes(), stream.get()));  // the contract in step.cuh
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  LaunchShape shape;  // the first run reports its launches here
  LaunchConfig first_cfg = cfg;
  first_cfg.shape = &shape;
  const Runs<float> runs_out = run_slots<float>(opt.warmup, opt.iters, 1, flusher, stream.get(), [&](float* out, int k) {
    return step.launch(in.get(), n, out, Scratch{scratch.get(), scratch.bytes()}, k == 0 ? first_cfg : cfg,
                       stream.get());
  });
  const std::vector<float>& sums = runs_out.results;

  Report r;
  r.step = step.name;
  r.lesson = step.lesson;
  r.device = device;
  r.n = n;
  r.pattern = opt.pattern;
  r.seed = opt.seed;
  r.block = shape.launches > 0 ? shape.block : (step.uses_block ? opt.block : 0);
  r.grid = shape.grid;
  r.launches = shape.launches;
  r.iters = opt.iters;
  r.warmup = opt.warmup;
  r.ms = runs_out.summary;
  r.cpu_ms = cpu_ms;
  r.cpu_parallel_ms = cpu_parallel_ms;
  r.cpu_threads = cpu_threads;
  r.reference = ref.sum;
  r.deterministic = step.deterministic;
  r.runs_total = runs;
  r.runs_identical = runs_out.identical;
  r.fits_in_l2 = n * static_cast<std::int64_t>(sizeof(float)) <= device.l2_bytes;

  // Every run is checked; the report shows the first wrong one, or else the last.
  int first_wrong = -1;
  for (int k = 0; k < runs; ++k) {
    const Check c = check_result(sums[k], ref, n, opt.pattern);
    r.runs_correct += c.passed;
    if (!c.passed && first_wrong < 0) first_wrong = k;
  }
  const int shown = first_wrong >= 0 ? first_wrong : runs - 1;
  const Check c = check_result(sums[shown], ref, n, opt.pattern);
  r.result = sums[shown];
  r.abs_error = c.abs_error;
  r.tolerance = c.tolerance;
  r.exact_check = c.exact;
  r.input_unchanged = device_equals_host(in.get(), host.get(), n);
  const bool determinism_kept = !step.deterministic || r.runs_identical;
  r.passed = r.runs_correct == runs && r.input_unchanged && determinism_kept;
  derive_rates(r);

  if (first_wrong >= 0)
    std::fprintf(stderr, "%s: run %d of %d returned %.9g, reference %.9g (|error| %.3g, allowed %.3g)\n", step.name,
                 first_wrong + 1, runs, static_cast<double>(sums[first_wrong]), ref.sum, c.abs_error, c.tolerance);
  if (!r.input_unchanged) std::fprintf(stderr, "%s: the step modified its input\n", step.name);
  if (!determinism_kept)
    std::fprintf(stderr, "%s: claims determinism, but repeated runs gave different bits\n", step.name);
  return r;
}

}  // namespace

std::vector<double> time_runs(int warmup, int iters, L2Flusher& flusher, cudaStream_t stream,
                              const std::function<void(int)>& launch) {
  std::vector<Event> start(iters), stop(iters);
  for (int r = 0; r < warmup; ++r) launch(r);
  for (int i = 0; i < iters; ++i) {
    flusher.flush(stream);
    CUDA_CHECK(cudaEventRecord(start[i].get(), stream));
    launch(warmup + i);
    CUDA_CHECK(cudaEventRecord(stop[i].get(), stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> ms(iters);
  for (int i = 0; i < iters; ++i) {
    float t = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&t, start[i].get(), stop[i].get()));
    ms[i] = t;
  }
  return ms;
}

double time_cpu(int runs, const std::function<void()>& body) {
  std::vector<double> ms;
  for (int k = 0; k < runs; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return summarize(ms).median;
}

void add_comparison(Report& r, const std::string& name, const Summary& ms) {
  const double gbps = gbps_of(bytes_read(r), ms.median);
  r.extra.push_back(number_field(name + "_median_ms", ms.median));
  r.extra.push_back(number_field(name + "_min_ms", ms.min));
  r.extra.push_back(number_field(name + "_max_ms", ms.max));
  r.extra.push_back(number_field(name + "_gbps", gbps));
  r.extra.push_back(number_field("vs_" + name, gbps > 0 ? r.gbps / gbps : 0.0));
}

void ensure_device_memory(std::size_t needed) {
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (needed > free_bytes)
    throw NoUsableDevice("this run needs " + std::to_string(needed / 1000000) + " MB of device memory and " +
                         std::to_string(free_bytes / 1000000) + " MB are free; use a smaller --n");
}

void print_report(const Report& r, Format format) {
  switch (format) {
    case Format::text: std::cout << format_text(r); break;
    case Format::csv: std::cout << csv_header(r) << "\n" << format_csv(r) << "\n"; break;
    case Format::json: std::cout << format_json(r) << "\n"; break;
  }
}

int guarded_main(const char* program, const std::int64_t& n, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  } catch (const NoUsableDevice& e) {
    std::fprintf(stderr, "%s: no usable CUDA device: %s\n", program, e.what());
    return 77;
  } catch (const CudaError& e) {
    if (is_unsupported_device_error(e.code())) {
      std::fprintf(stderr, "%s: no usable CUDA device: %s (a GPU this build has no code for, or one that lacks a "
                           "feature the step needs; rebuild with -DCMAKE_CUDA_ARCHITECTURES=native)\n",
                   program, e.what());
      return 77;
    }
    std::fprintf(stderr, "%s: CUDA error: %s\n", program, e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: no usable machine: not enough host memory for --n %lld\n", program,
                 static_cast<long long>(n));
    return 77;
  }
}

void Emitter::operator()(const Report& r) {
  switch (format_) {
    case Format::text: std::cout << (emitted_ > 0 ? "\n" : "") << format_text(r); break;
    case Format::csv:
      if (emitted_ == 0) std::cout << csv_header(r) << "\n";
      std::cout << format_csv(r) << "\n";
      break;
    case Format::json: std::cout << format_json(r) << "\n"; break;
  }
  std::cout.flush();
  ++emitted_;
  failed_ += !r.passed;
}

int run_bench(const Bench& bench, int argc, char** argv) {
  Options opt;
  opt.n = bench.spec.default_n;
  return guarded_main(bench.name, opt.n, [&] {
    opt = parse_options(argc, argv, bench.spec);
    if (opt.help) {
      std::cout << usage(bench.name, bench.lesson, bench.spec);
      return 0;
    }
    if (bench.check) bench.check(opt);
    const DeviceInfo device = bench.opens_own_devices ? DeviceInfo{} : open_device(opt.device);
    Emitter emit(opt.format);
    bench.measure(opt, device, emit);
    if (emit.emitted() == 0) std::fprintf(stderr, "%s: the run produced no record\n", bench.name);
    return emit.all_passed() ? 0 : 1;
  });
}

int run_step(const Step& step, int argc, char** argv) {
  Options opt;
  OptionSpec spec;
  spec.default_block = step.default_block;
  return guarded_main(step.name, opt.n, [&] {
    opt = parse_options(argc, argv, spec);
    if (opt.help) {
      std::cout << usage(step.name, step.lesson, spec);
      return 0;
    }
    const DeviceInfo device = open_device(opt.device);
    const Report r = measure(step, opt, device);
    print_report(r, opt.format);
    return r.passed ? 0 : 1;
  });
}

}  // namespace reduce
