// The harness's entry point: everything a step executable does besides its kernel.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "device.cuh"
#include "options.hpp"
#include "report.hpp"
#include "step.cuh"

namespace reduce {

// Parses the options, generates the input, computes the CPU reference and baseline, runs the step
// (warm-up runs, then timed runs with the L2 flushed before each; every run's result is checked),
// prints the report and returns the exit code: 0 correct, 1 wrong result or CUDA error, 2 bad usage,
// 77 no usable GPU.
int run_step(const Step& step, int argc, char** argv);

// The pieces run_step is made of, for programs with their own main (the steps beyond a float sum).

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
// testEngine: a step fills one Bench record and its main() is one line, run_bench(kBench, argc, argv).
// The harness owns everything else: the one command line (the progression's options with the same
// meanings, plus the step's own, from OptionSpec), --help with the same sections, the device, the exit
// codes (guarded_main), and the one record format (print_report: text, csv or json; csv prints its
// header once, then one line per record).
//
// A step's measure() receives the parsed options and the opened device (none when the Bench says it
// opens its own devices, as the multi-GPU step does), runs, checks and times as it needs (run_slots,
// time_runs, ensure_device_memory, add_comparison), and hands each finished Report to emit(); a
// sweep emits several. The run's exit code is 0 when every emitted report passed, 1 otherwise (and
// when none was emitted).
class Emitter {
 public:
  explicit Emitter(Format format) : format_(format) {}
  void operator()(const Report& r);
  int emitted() const { return emitted_; }
  bool all_passed() const { return emitted_ > 0 && failed_ == 0; }

 private:
  Format format_;
  int emitted_ = 0, failed_ = 0;
};

struct Bench {
  const char* name;    // the folder and executable name, "12_types_ops"
  const char* lesson;  // what the step teaches, in a few words (the --help title, the record's lesson)
  OptionSpec spec;     // its own options, patterns, default n, --block rule and --help notes
  // Checks what the parser cannot (combinations of options, files); throws UsageError. Runs before any
  // device is touched. May be null.
  void (*check)(const Options& opt) = nullptr;
  void (*measure)(const Options& opt, const DeviceInfo& device, Emitter& emit) = nullptr;
  bool opens_own_devices = false;  // true: measure() gets an empty DeviceInfo and opens its GPUs itself
};

// The whole program of a step beyond the progression; returns its exit code.
int run_bench(const Bench& bench, int argc, char** argv);

}  // namespace reduce
