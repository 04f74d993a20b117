// The harness's entry point: everything a step executable does besides its kernel.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "device.cuh"
#include "input.hpp"
#include "options.hpp"
#include "report.hpp"
#include "step.cuh"

namespace reduce {

// The whole program of a progression step: run_bench (below) with a Bench made from the Step record,
// whose measurement generates the input, computes the CPU reference and yardsticks, runs the step
// (warm-up runs, then timed runs with the L2 flushed before each; every run's result is checked) and
// fills the record through the same engine as every other step. Returns the exit code.
int run_step(const Step& step, int argc, char** argv);

// The pieces the engine is made of, for a step's measure().

// Calls launch(r) for r = 0 .. warmup-1 untimed, then for r = warmup .. warmup+iters-1 each after an
// L2 flush and between two events on stream; returns the timed runs' milliseconds, in order.
std::vector<double> time_runs(int warmup, int iters, L2Flusher& flusher, cudaStream_t stream,
                              const std::function<void(int)>& launch);

// The timed runs of one launcher whose every run writes `count` results of type S (a float, a
// reduction state, one sum per segment): run r writes into its own slot of a device buffer that starts
// as all-ones bytes (NaN for floats), so an unwritten result fails its check. Returns the timed runs'
// milliseconds, every run's results (warm-up runs first; run r's at results[r * count]) and whether
// every run gave the same bits as the first.
template <typename S>
struct Runs {
  std::vector<double> ms;     // the timed runs, in order
  Summary summary;            // their median, min and max
  std::vector<S> results;     // (warmup + iters) * count values
  std::int64_t count = 0;
  bool identical = true;      // every run bitwise equal to run 0
  const S* run(int r) const { return results.data() + static_cast<std::size_t>(r) * count; }
  int total() const { return count > 0 ? static_cast<int>(results.size() / count) : 0; }
};
template <typename S, typename Launch>  // Launch: cudaError_t(S* out, int run)
Runs<S> run_slots(int warmup, int iters, std::int64_t count, L2Flusher& flusher, cudaStream_t stream, Launch&& launch) {
  const int runs = warmup + iters;
  DeviceBuffer<S> out(static_cast<std::int64_t>(runs) * count);
  CUDA_CHECK(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), stream));
  Runs<S> r;
  r.count = count;
  r.ms = time_runs(warmup, iters, flusher, stream, [&](int k) {
    CUDA_CHECK(launch(out.get() + static_cast<std::int64_t>(k) * count, k));
    CUDA_CHECK(cudaGetLastError());
  });
  r.summary = summarize(r.ms);
  r.results.resize(static_cast<std::size_t>(runs) * count);
  if (!r.results.empty())
    CUDA_CHECK(cudaMemcpy(r.results.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
  for (int k = 1; k < runs && r.identical; ++k)
    r.identical = std::memcmp(r.run(k), r.run(0), count * sizeof(S)) == 0;
  return r;
}

// The input of one measurement and the means to time launchers on it: n elements of opt.pattern on the
// host and the same uploaded to the device, a stream and an L2 flusher. time<S>() is run_slots with the
// options' warm-up and timed runs on that stream; config(cfg, k) is cfg with run 0 reporting its launches
// into `shape` (the record's grid, block and kernels).
template <typename T>
struct Testbed {
  Testbed(const Options& opt_, const DeviceInfo& device) : opt(opt_), n(opt_.n), host(new T[std::max<std::int64_t>(n, 1)]), in(n), flusher(device) {
    fill_input(host.get(), n, opt.pattern, opt.seed);
    CUDA_CHECK(cudaMemcpyAsync(in.get(), host.get(), in.bytes(), cudaMemcpyHostToDevice, stream.get()));
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  }
  // Device scratch of `bytes`, zero-filled before any launch (the contract in step.cuh).
  DeviceBuffer<unsigned char> scratch(std::size_t bytes) const {
    DeviceBuffer<unsigned char> s(bytes);
    CUDA_CHECK(cudaMemsetAsync(s.get(), 0, s.bytes(), stream.get()));  // ordered before the launches on stream
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    return s;
  }
  template <typename S, typename Launch>  // Launch: cudaError_t(S* out, int run)
  Runs<S> time(std::int64_t count, Launch&& launch) {
    return run_slots<S>(opt.warmup, opt.iters, count, flusher, stream.get(), std::forward<Launch>(launch));
  }
  LaunchConfig config(LaunchConfig cfg, int run) {
    if (run == 0) cfg.shape = &shape;
    return cfg;
  }
  bool input_unchanged() const { return device_equals_host(in.get(), host.get(), n); }

  const Options& opt;
  std::int64_t n;
  std::unique_ptr<T[]> host;
  Stream stream;
  DeviceBuffer<T> in;
  L2Flusher flusher;
  LaunchShape shape;
};

// A scratch buffer as launchers take it.
inline Scratch view(const DeviceBuffer<unsigned char>& b) { return Scratch{b.get(), b.bytes()}; }

// The median milliseconds of `runs` calls of body() on the CPU (0 when runs is 0): a CPU yardstick.
double time_cpu(int runs, const std::function<void()>& body);

// GB/s of `bytes` read in `ms` milliseconds (0 when ms is not positive): decimal, as every report.
inline double gbps_of(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0.0; }

// Adds a comparison's fields to a report: <name>_median_ms, _min_ms, _max_ms, <name>_gbps (of the
// report's bytes) and vs_<name>, the report's speed over the comparison's (its time over ours).
void add_comparison(Report& r, const std::string& name, const Summary& ms);

// Throws NoUsableDevice (exit 77) when the device has fewer than `needed` bytes free.
void ensure_device_memory(std::size_t needed);

// The report in the chosen format on stdout (csv: header line, then the record).
void print_report(const Report& r, Format format);

// Runs body and returns its exit code, or maps what it throws to the suite's exit codes with a
// one-line message on stderr: UsageError 2, NoUsableDevice 77, CudaError 1 (77 when the GPU cannot run
// this build), std::bad_alloc 77 (n names the --n that asked too much host memory).
int guarded_main(const char* program, const std::int64_t& n, const std::function<int()>& body);

// ---------------------------------------------------------------------------------------------
// The plug-in point of the steps beyond the progression (12 and on), in the manner of nccl-tests'
// testEngine: a step fills one Bench record and its main() is one line, run_bench(bench, argc, argv).
// The harness owns everything else: the one command line (the progression's options with the same
// meanings, plus the step's own, from OptionSpec), --help with the same sections, the device, the exit
// codes (guarded_main), and the one record format (print_report: text, csv or json; csv prints its
// header once, then one line per record).
//
// A step's measure() receives the parsed options and the opened device (none when the Bench says it
// opens its own devices, as the multi-GPU step does), runs and times as it needs (run_slots, time_runs,
// ensure_device_memory), fills the record through the engine (below) and hands each finished Report to
// emit(); a sweep emits several. The run's exit code is 0 when every emitted report passed, 1 otherwise (and
// when none was emitted).
struct Bench;
class Emitter {
 public:
  Emitter(Format format, const Bench& bench) : format_(format), bench_(bench) {}
  void operator()(const Report& r);
  int emitted() const { return emitted_; }
  bool all_passed() const { return emitted_ > 0 && failed_ == 0; }
  const Bench& bench() const { return bench_; }  // the step whose records these are (fill_common)

 private:
  Format format_;
  const Bench& bench_;
  int emitted_ = 0, failed_ = 0;
};

struct Bench {
  const char* name;    // the step: folder, executable and record name, "12_types_ops"
  const char* lesson;  // what the step teaches, in a few words (the --help title, the record's lesson)
  OptionSpec spec;     // its own options, patterns, default n, block rule and refused options, --help notes
  // Checks what the parser cannot (combinations of options, files); throws UsageError. Runs before any
  // device is touched. May be empty.
  std::function<void(const Options& opt)> check;
  std::function<void(const Options& opt, const DeviceInfo& device, Emitter& emit)> measure;
  bool opens_own_devices = false;  // true: measure() gets an empty DeviceInfo and opens its GPUs itself
  bool deterministic = true;       // the claim the record carries and the engine checks (same bits every run)
  const char* program = nullptr;   // how --help and messages name the program where not `name` (an MPI rank)
};

// The whole program of a step; returns its exit code.
int run_bench(const Bench& bench, int argc, char** argv);

// ---------------------------------------------------------------------------------------------
// The record, filled by the engine. A step's measure() runs and times what it compares, then:
//   Report r = fill_common(emit, opt, device);    step, lesson, device, n, pattern, seed, iters, warmup,
//                                                 runs_total, block (the rule's), the determinism claim
//   fill_timing(r, mine, shape);                  the step's timed runs and its first launch's shape
//   check_runs(r, verdict);                       every run checked; the first wrong one shown and told
//   finish(r, input_unchanged);                   passed, fits_in_l2, the rates, the other diagnostics
// and adds only its own fields (r.extra, add_comparison) before emit(r).

Report fill_common(const Bench& bench, const Options& opt, const DeviceInfo& device);
inline Report fill_common(const Emitter& emit, const Options& opt, const DeviceInfo& device) {
  return fill_common(emit.bench(), opt, device);
}

// The timed runs' summary, whether every run gave the bits of the first, and the launch shape the
// first run reported (grid, block, kernels), where it reported one.
void fill_timing(Report& r, const Summary& ms, bool identical, const LaunchShape& shape = {});
template <typename S>
void fill_timing(Report& r, const Runs<S>& runs, const LaunchShape& shape = {}) {
  fill_timing(r, runs.summary, runs.identical, shape);
}

// One run's result against its reference.
struct Verdict {
  Verdict() = default;
  Verdict(const Check& c, double result_, double reference_, std::string what_ = "")
      : passed(c.passed), result(result_), reference(reference_), check(c), what(std::move(what_)) {}
  // A float sum against the double reference (check_result).
  Verdict(float x, const Reference& ref, std::int64_t n, Pattern p) : Verdict(check_result(x, ref, n, p), x, ref.sum) {}
  bool passed = false;
  double result = 0.0, reference = 0.0;  // as the record shows them (stats: the mean)
  Check check;                           // |error|, tolerance and whether exact
  std::string what;                      // what was wrong when it failed ("the min", "segment 7 [70, 80)")
  std::string note;                      // context for the message ("bits 0x3f800001, the model's 0x3f800000")
};

// Asks verdict(k) for runs k = 0 .. r.runs_total - 1, counts runs_correct, and sets result, reference,
// abs_error, tolerance and exact_check from the run the record shows: the first wrong one, else the
// last. The first wrong run is told in one line on stderr (unless speak is false). Returns the shown run.
int check_runs(Report& r, const std::function<Verdict(int)>& verdict, bool speak = true);

// The CPU yardsticks over x[0..n) (Report::cpu_ms, cpu_parallel_ms, cpu_threads): the plain loop on one
// core and the vectorized one on all, each the median of `runs` (0: not timed).
void time_cpu_yardsticks(Report& r, const float* x, std::int64_t n, int runs);

// passed (every run correct, the input unchanged, the same bits every run where the step claims it),
// fits_in_l2 (of the bytes read), the rates (derive_rates), and a line on stderr for each failure that
// check_runs did not tell.
void finish(Report& r, bool input_unchanged, bool speak = true);

}  // namespace reduce
