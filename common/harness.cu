#include "harness.cuh"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "device.cuh"
#include "files.hpp"
#include "input.hpp"
#include "options.hpp"
#include "report.hpp"

namespace reduce {
namespace {

// One line on stderr for a wrong run: "<step>: n = N: <whose>run K of T: <what> is X, reference Y ...".
void tell_wrong(const Report& r, const char* whose, int run, int total, const Verdict& v) {
  std::fprintf(stderr, "%s: n = %lld: %srun %d of %d: %s is %.17g, reference %.17g (|error| %.3g, allowed %.3g)%s%s\n",
               r.step.c_str(), static_cast<long long>(r.n), whose, run + 1, total,
               v.what.empty() ? "the result" : v.what.c_str(), v.result, v.reference, v.check.abs_error,
               v.check.tolerance, v.note.empty() ? "" : "; ", v.note.c_str());
}

}  // namespace

int exit_code(const char* program, std::int64_t n) {
  try {
    throw;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  } catch (const NoUsableDevice& e) {
    std::fprintf(stderr, "%s: no usable CUDA device: %s\n", program, e.what());
    return 77;
  } catch (const CudaError& e) {
    if (is_unsupported_device_error(e.code())) {
      std::fprintf(stderr,
                   "%s: no usable CUDA device: %s (a GPU this build has no code for, or one that lacks a "
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
  } catch (const OutputError& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
}

namespace {

// argv parsed into opt; true when it asks for --help, which is printed then.
bool parsed_help(Options& opt, int argc, char** argv, const char* program, const char* lesson, const OptionSpec& spec) {
  opt = parse_options(argc, argv, spec);
  if (opt.help) std::cout << usage(program, lesson, spec);
  return opt.help;
}

// code, unless output never arrived (a full disk, a closed pipe: SIGPIPE is ignored so that the write
// fails): then 1 with one line, whatever the run computed.
int flushed(const char* program, int code) {
  if (const std::string why = flush_stdout(); !why.empty()) {
    std::fprintf(stderr, "%s: cannot write the output (stdout): %s\n", program, why.c_str());
    return code != 0 ? code : 1;
  }
  return code;
}

}  // namespace

Clock::Clock(int warmup, int iters, L2Flusher& flusher, cudaStream_t stream)
    : warmup_(warmup), flusher_(flusher), stream_(stream), start_(iters), stop_(iters) {}

void Clock::start(int run) {
  if (run < warmup_) return;
  flusher_.flush(stream_);
  CUDA_CHECK(cudaEventRecord(start_[run - warmup_].get(), stream_));
}

void Clock::stop(int run) {
  if (run >= warmup_) CUDA_CHECK(cudaEventRecord(stop_[run - warmup_].get(), stream_));
}

std::vector<double> Clock::ms() {
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::vector<double> out(start_.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    float t = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&t, start_[i].get(), stop_[i].get()));
    out[i] = t;
  }
  return out;
}

std::vector<double> time_runs(int warmup, int iters, L2Flusher& flusher, cudaStream_t stream,
                              const std::function<void(int)>& launch) {
  Clock clock(warmup, iters, flusher, stream);
  for (int k = 0; k < clock.runs(); ++k) {
    clock.start(k);
    launch(k);
    clock.stop(k);
  }
  return clock.ms();
}

namespace {

// A graph node's dependencies or dependents (CUDA 13 added their edges' data to both calls).
std::vector<cudaGraphNode_t> neighbours(cudaGraphNode_t node, bool dependents) {
  std::size_t count = 0;
#if CUDART_VERSION >= 13000
  const auto list = [&](cudaGraphNode_t* out) {
    return dependents ? cudaGraphNodeGetDependentNodes(node, out, nullptr, &count)
                      : cudaGraphNodeGetDependencies(node, out, nullptr, &count);
  };
#else
  const auto list = [&](cudaGraphNode_t* out) {
    return dependents ? cudaGraphNodeGetDependentNodes(node, out, &count)
                      : cudaGraphNodeGetDependencies(node, out, &count);
  };
#endif
  if (list(nullptr) != cudaSuccess) return {};
  std::vector<cudaGraphNode_t> out(count);
  if (count > 0 && list(out.data()) != cudaSuccess) return {};
  out.resize(count);
  return out;
}

}  // namespace

LaunchShape launch_shape(cudaStream_t stream, const std::function<cudaError_t(cudaStream_t)>& launch) {
  LaunchShape shape;
  cudaGraph_t graph = nullptr;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) == cudaSuccess) {
    const cudaError_t launched = launch(stream);
    if (cudaStreamEndCapture(stream, &graph) != cudaSuccess || launched != cudaSuccess) {
      if (graph) cudaGraphDestroy(graph);
      graph = nullptr;
    }
  }
  (void)cudaGetLastError();  // a launcher that cannot be captured leaves no error for the runs after
  if (!graph) return shape;
  std::size_t count = 0;
  std::vector<cudaGraphNode_t> nodes;
  if (cudaGraphGetNodes(graph, nullptr, &count) == cudaSuccess) {
    nodes.resize(count);
    if (cudaGraphGetNodes(graph, nodes.data(), &count) != cudaSuccess) nodes.clear();
  }
  // One stream's capture is a chain: walk it from its root, so that the first kernel is the first enqueued.
  auto node = std::find_if(nodes.begin(), nodes.end(), [](cudaGraphNode_t x) { return neighbours(x, false).empty(); });
  for (cudaGraphNode_t at = node != nodes.end() ? *node : nullptr; at != nullptr;) {
    cudaGraphNodeType type{};
    cudaKernelNodeParams p{};
    if (cudaGraphNodeGetType(at, &type) == cudaSuccess && type == cudaGraphNodeTypeKernel &&
        cudaGraphKernelNodeGetParams(at, &p) == cudaSuccess && shape.launches++ == 0) {
      shape.grid = std::int64_t{p.gridDim.x} * p.gridDim.y * p.gridDim.z;
      shape.block = static_cast<int>(p.blockDim.x * p.blockDim.y * p.blockDim.z);
    }
    const std::vector<cudaGraphNode_t> next = neighbours(at, true);
    at = next.empty() ? nullptr : next.front();
  }
  cudaGraphDestroy(graph);
  return shape;
}

void add_comparison(Report& r, const std::string& name, const Summary& ms) {
  const double gbps = gbps_of(bytes_read(r), ms.median);
  for (Field& f : prefixed(name, {number_field("median_ms", ms.median), number_field("min_ms", ms.min),
                                  number_field("max_ms", ms.max), number_field("gbps", gbps)}))
    r.extra.push_back(std::move(f));
  r.extra.push_back(number_field("vs_" + name, gbps > 0 ? r.gbps / gbps : 0.0));
  r.extra_samples.emplace_back(name, ms.samples);
}

Verdict sum_verdict(float x, const Reference& ref, std::int64_t n, Pattern p) {
  Verdict v(x, ref, n, p);
  v.passed = v.passed || (std::isnan(x) && std::isnan(ref.sum)) || (std::isinf(x) && x == ref.sum);
  return v;
}

std::vector<Field> prefixed(const std::string& name, std::vector<Field> fields) {
  for (Field& f : fields) f.name = name + "_" + f.name;
  return fields;
}

void record_rival(Report& r, const std::string& name, const Summary& ms, bool identical, const RivalCheck& check,
                  std::vector<Field> fields) {
  for (Field& f : fields) r.extra.push_back(std::move(f));
  add_comparison(r, name, ms);
  // Vacuously where there are no results (no segments).
  r.extra.push_back(bool_field(name + "_passed", check.correct == check.total));
  r.extra.push_back(bool_field(name + "_runs_identical", identical));
  if (check.first_wrong >= 0)
    tell_wrong(r, ("note: " + name + "'s ").c_str(), check.first_wrong, check.total, check.wrong);
}

std::int64_t fits_on_device(std::int64_t n, std::size_t element, std::size_t more, const DeviceInfo& device) {
  ensure_device_memory(static_cast<std::size_t>(n) * element + more + 2 * device.l2_bytes + (std::size_t{64} << 20));
  return n;
}

void ensure_device_memory(std::size_t needed) {
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (needed > free_bytes)
    throw NoUsableDevice("this run needs " + std::to_string(needed / 1000000) + " MB of device memory and " +
                         std::to_string(free_bytes / 1000000) + " MB are free; use a smaller --n");
}

int guarded_main(const char* program, const std::int64_t& n, const std::function<int()>& body) {
  std::signal(SIGPIPE, SIG_IGN);
  try {
    return flushed(program, body());
  } catch (...) {
    return exit_code(program, n);
  }
}

void Emitter::operator()(const Report& r) {
  switch (format_) {
    case Format::text:
      std::cout << (emitted_ > 0 ? "\n" : "") << format_text(r);
      break;
    case Format::csv:
      if (emitted_ == 0) std::cout << csv_header(r) << "\n";
      std::cout << format_csv(r) << "\n";
      break;
    case Format::json:
      std::cout << format_json(r) << "\n";
      break;
  }
  std::cout.flush();
  ++emitted_;
  failed_ += !r.passed;
}

int run_bench(const Bench& bench, int argc, char** argv) {
  const char* program = bench.program ? bench.program : bench.name;
  std::signal(SIGPIPE, SIG_IGN);
  Options opt;
  opt.n = bench.spec.default_n;
  try {
    if (parsed_help(opt, argc, argv, program, bench.lesson, bench.spec)) return flushed(program, 0);
    if (bench.check) bench.check(opt);
    const DeviceInfo device = bench.opens_own_devices ? DeviceInfo{} : open_device(opt.device);
    Emitter emit(opt.format, bench);
    bench.measure(opt, device, emit);
    if (emit.emitted() == 0) std::fprintf(stderr, "%s: the run produced no record\n", program);
    return flushed(program, emit.all_passed() ? 0 : 1);
  } catch (...) {
    return exit_code(program, opt.n);
  }
}

// The whole program of a progression step, its launches in its own loop: main -> run_step -> the
// step's launch (then with_block_size's call to the step's kernel launch): the input of the pattern,
// the CPU reference and yardsticks, the timed runs (warm-up, then each after an L2 flush), every run's
// result checked, one record.
int run_step(const Step& step, int argc, char** argv) {
  // Messages and --help name the program as it was invoked (a variant built from a step's file, such as
  // 04_unroll_warp_unsafe, is not the step); the record names the step.
  const std::string invoked = argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "";
  const char* program = invoked.empty() ? step.name : invoked.c_str();
  Bench bench{step.name, step.lesson};
  bench.spec.block = step.block;
  bench.deterministic = step.deterministic;
  std::signal(SIGPIPE, SIG_IGN);
  Options opt;
  opt.n = bench.spec.default_n;
  try {
    if (parsed_help(opt, argc, argv, program, step.lesson, bench.spec)) return flushed(program, 0);
    const DeviceInfo device = open_device(opt.device);
    const LaunchConfig cfg{opt.block, device.ordinal, device.sm_count};
    Testbed<float> bed(opt, device, step.scratch_bytes(opt.n, cfg));
    const Reference ref = reference_sum(bed.host.get(), opt.n);
    Report r = fill_common(bench, opt, device);
    time_cpu_yardsticks(r, bed.host.get(), opt.n, opt.cpu_runs);

    const Scratch scratch = view(bed.step_scratch);
    Clock clock(opt.warmup, opt.iters, bed.flusher, bed.stream.get());
    const Slots<float> out(clock.runs(), 1, bed.stream.get());
    for (int k = 0; k < clock.runs(); ++k) {
      clock.start(k);
      CUDA_CHECK(step.launch(bed.in.get(), opt.n, out.at(k), scratch, cfg, bed.stream.get()));
      CUDA_CHECK(cudaGetLastError());
      clock.stop(k);
    }
    Runs<float> runs = out.collect(clock.ms());
    runs.shape = launch_shape(
        bed.stream.get(), [&](cudaStream_t s) { return step.launch(bed.in.get(), opt.n, out.at(0), scratch, cfg, s); });
    fill_timing(r, runs);
    check_runs(r, [&](int k) { return Verdict(*runs.run(k), ref, opt.n, opt.pattern); });
    finish(r, bed.input_unchanged());
    Emitter(opt.format, bench)(r);
    return flushed(program, r.passed ? 0 : 1);
  } catch (...) {
    return exit_code(program, opt.n);
  }
}

Report fill_common(const Bench& bench, const Options& opt, const DeviceInfo& device) {
  Report r;
  r.step = bench.name;
  r.lesson = bench.lesson;
  r.device = device;
  r.n = opt.n;
  r.pattern = opt.pattern;
  r.seed = opt.seed;
  r.block = bench.spec.block.kind == BlockRule::chosen ? 0 : opt.block;  // fixed: the parser set opt.block to it
  r.block_rule = bench.spec.block.kind_name();
  r.iters = opt.iters;
  r.warmup = opt.warmup;
  r.runs_total = opt.warmup + opt.iters;
  r.deterministic = bench.deterministic;
  return r;
}

void fill_timing(Report& r, const Summary& ms, bool identical, const LaunchShape& shape) {
  r.ms = ms;
  r.runs_identical = identical;
  if (shape.launches > 0 && r.block_rule != "chosen") {  // chosen inside: the record shows 0
    r.block = shape.block;
    r.grid = shape.grid;
    r.launches = shape.launches;
  }
}

int check_runs(Report& r, const std::function<Verdict(int)>& verdict, bool speak) {
  int first_wrong = -1;
  r.runs_correct = 0;
  for (int k = 0; k < r.runs_total; ++k) {
    const bool ok = verdict(k).passed;
    r.runs_correct += ok;
    if (!ok && first_wrong < 0) first_wrong = k;
  }
  const int shown = first_wrong >= 0 ? first_wrong : r.runs_total - 1;
  if (shown < 0) return 0;
  const Verdict v = verdict(shown);
  r.result = v.result;
  r.reference = v.reference;
  r.abs_error = v.check.abs_error;
  r.tolerance = v.check.tolerance;
  r.exact_check = v.check.exact;
  if (first_wrong >= 0 && speak) tell_wrong(r, "", first_wrong, r.runs_total, v);
  return shown;
}

void time_cpu_yardsticks(Report& r, const float* x, std::int64_t n, int runs) {
  float result = 0.0f;
  r.cpu_ms = time_cpu_sum(x, n, runs, &result);
  r.cpu_parallel_ms = time_cpu_sum_parallel(x, n, runs, &result, &r.cpu_threads);
}

void finish(Report& r, bool input_unchanged, bool speak) {
  r.input_unchanged = input_unchanged;
  r.fits_in_l2 = bytes_read(r) <= static_cast<double>(r.device.l2_bytes);
  const bool determinism_kept = !r.deterministic || r.runs_identical;
  r.passed = r.runs_total > 0 && r.runs_correct == r.runs_total && r.input_unchanged && determinism_kept;
  derive_rates(r);
  if (!speak) return;
  const long long n = r.n;
  if (!r.input_unchanged) std::fprintf(stderr, "%s: n = %lld: the step modified its input\n", r.step.c_str(), n);
  if (!determinism_kept)
    std::fprintf(stderr, "%s: n = %lld: claims the same bits every run, but repeated runs gave different bits\n",
                 r.step.c_str(), n);
}

}  // namespace reduce
