// The harness's entry point: everything a step executable does besides its kernel.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "device.cuh"
#include "input.hpp"
#include "options.hpp"
#include "report.hpp"
#include "step.cuh"

namespace reduce {

// The whole program of a progression step, with the options, --help, record and exit codes of every
// executable: it generates the input, computes the CPU reference and yardsticks, runs the step in its
// own loop (warm-up runs, then timed runs with the L2 flushed before each: main -> run_step -> the
// step's launch), checks every run's result and prints the record. Returns the exit code.
int run_step(const Step& step, int argc, char** argv);

// The pieces the engine is made of, for a step's measure().

// The timed loop's clock. Runs 0 .. warmup-1 are untimed; every later run is preceded by an L2 flush
// and lies between two events on the stream. A caller brackets run k's launches with start(k) and
// stop(k), so the loop that launches is its own (the short path from main to the kernel):
//   for (int k = 0; k < clock.runs(); ++k) { clock.start(k); launch(...); clock.stop(k); }
class Clock {
 public:
  Clock(int warmup, int iters, L2Flusher& flusher, cudaStream_t stream);
  int runs() const { return warmup_ + static_cast<int>(start_.size()); }
  void start(int run);
  void stop(int run);
  std::vector<double> ms();  // waits for the stream; the timed runs' milliseconds, in order

 private:
  int warmup_;
  L2Flusher& flusher_;
  cudaStream_t stream_;
  std::vector<Event> start_, stop_;
};

// Calls launch(r) for r = 0 .. warmup-1 untimed, then for r = warmup .. warmup+iters-1 each after an
// L2 flush and between two events on stream (Clock); returns the timed runs' milliseconds, in order.
std::vector<double> time_runs(int warmup, int iters, L2Flusher& flusher, cudaStream_t stream,
                              const std::function<void(int)>& launch);

// What one call of a launcher enqueues: its first kernel's grid and block and how many kernels, read
// from a CUDA graph of the call (captured on stream, never run), so that no launcher reports anything
// and nothing is written back into its configuration. Empty where the call cannot be captured.
LaunchShape launch_shape(cudaStream_t stream, const std::function<cudaError_t(cudaStream_t)>& launch);

// A scratch buffer as launchers take it.
inline Scratch view(const DeviceBuffer<unsigned char>& b) { return Scratch{b.get(), b.bytes()}; }

// Throws NoUsableDevice (exit 77) when the device has fewer than `needed` bytes free.
void ensure_device_memory(std::size_t needed);
// n, once ensure_device_memory has passed the one estimate of a run: the input (n elements of `element`
// bytes), `more` bytes (scratch, a step's own buffers), the L2 flusher's two L2 sizes, 64 MB for the runtime.
std::int64_t fits_on_device(std::int64_t n, std::size_t element, std::size_t more, const DeviceInfo& device);

// The timed runs of one launcher whose every run writes `count` results of type S (a float, a
// reduction state, one sum per segment): run r writes into its own slot of a device buffer that starts
// as all-ones bytes (NaN for floats), so an unwritten result fails its check. Returns the timed runs'
// milliseconds, every run's results (warm-up runs first; run r's at results[r * count]) and whether
// every run gave the same bits as the first.
template <typename S>
struct Runs {
  std::vector<double> ms;  // the timed runs, in order
  Summary summary;         // their median, min and max
  std::vector<S> results;  // (warmup + iters) * count values
  std::int64_t count = 0;
  bool identical = true;  // every run bitwise equal to run 0
  LaunchShape shape;      // the launch of one call, where the caller asked for it (Testbed::time)
  const S* run(int r) const { return results.data() + static_cast<std::size_t>(r) * count; }
  int total() const { return count > 0 ? static_cast<int>(results.size() / count) : 0; }
};
// The runs' results on the device: `count` values of S per run, all-ones bytes until written.
template <typename S>
struct Slots {
  Slots(int runs, std::int64_t count_, cudaStream_t stream)
      : count(count_), out(static_cast<std::int64_t>(runs) * count_) {
    CUDA_CHECK(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), stream));
  }
  S* at(int run) const { return out.get() + static_cast<std::int64_t>(run) * count; }
  // The runs copied back (after the clock's ms(), which waited for the stream), summarized and compared.
  Runs<S> collect(std::vector<double> ms) const {
    Runs<S> r;
    r.count = count;
    r.ms = std::move(ms);
    r.summary = summarize(r.ms);
    r.results.resize(out.size());
    if (!r.results.empty()) CUDA_CHECK(cudaMemcpy(r.results.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
    for (int k = 1; k < r.total() && r.identical; ++k)
      r.identical = std::memcmp(r.run(k), r.run(0), count * sizeof(S)) == 0;
    return r;
  }
  std::int64_t count;
  DeviceBuffer<S> out;
};

template <typename S, typename Launch>  // Launch: cudaError_t(S* out, int run)
Runs<S> run_slots(int warmup, int iters, std::int64_t count, L2Flusher& flusher, cudaStream_t stream, Launch&& launch) {
  Clock clock(warmup, iters, flusher, stream);
  const Slots<S> slots(clock.runs(), count, stream);
  for (int k = 0; k < clock.runs(); ++k) {
    clock.start(k);
    CUDA_CHECK(launch(slots.at(k), k));
    CUDA_CHECK(cudaGetLastError());
    clock.stop(k);
  }
  return slots.collect(clock.ms());
}

// A float sum where the input may hold NaN or infinities (the patterns nan and inf): check_result, or
// a NaN or infinite reference matched as it is. The verdict of the suite's float-sum rivals.
Verdict sum_verdict(float x, const Reference& ref, std::int64_t n, Pattern p);

// A rival: another reduction of the same input that a step is measured against in the same run (step 10,
// CUB, CUB 3.5's variants; 14_reproducible/rivals.cuh declares the suite's, by name). Testbed::rival gives it
// zero-filled scratch and times it exactly like the step; add_rival (below) checks every run with the
// caller's verdict and records it. A step beyond declares one of its own with its launch, in a few lines:
//   const reduce::Rival<float> cub35{"cub35", [&](std::int64_t) { return bytes; },
//       [&](const float* in, std::int64_t n, float* out, reduce::Scratch s, cudaStream_t st) { return ...; }};
//   reduce::add_rival(r, bed.rival(cub35), [&](const float* x) { return reduce::sum_verdict(*x, ref, n, p); });
template <typename T, typename S = T>  // T: the input's elements, S: its result (a float, a reduction state)
struct Rival {
  std::string name;                                          // the record's prefix: <name>_median_ms ... vs_<name>
  std::function<std::size_t(std::int64_t n)> scratch_bytes;  // the scratch its launch gets (empty: none)
  std::function<cudaError_t(const T* in, std::int64_t n, S* out, Scratch scratch, cudaStream_t stream)> launch;
  std::int64_t count = 1;     // results per run (one per segment)
  std::string absent;         // not empty: this build has no such rival, and why (the record's <name>)
  std::vector<Field> fields;  // recorded with it as they are named (cub_g2g_cccl)
};

// A rival's timed runs (Runs), with what the record needs of its declaration.
template <typename S>
struct RivalRuns : Runs<S> {
  using Verdicts = std::function<Verdict(const S* results)>;             // one run's results checked
  using Describe = std::function<std::vector<Field>(const S* results)>;  // fields of the run shown
  std::string name, absent;
  std::vector<Field> fields;
};

class Emitter;
template <typename T, typename S>
struct Measurement;
template <typename S>
struct Measured;

// The input of one measurement and the means to time launchers on it: n elements of opt.pattern on the
// host and the same uploaded to the device, a stream, an L2 flusher and the step's scratch (zero-filled).
// The constructor first checks the device memory the run needs, the one estimate of every executable
// (fits_on_device): the input, the scratch, `more_bytes` (a step's own buffers), the L2 flusher's and the
// runtime's.
// time<S>() is run_slots with the options' warm-up and timed runs on that stream, and the launch
// shape of one call (launch_shape) in Runs::shape.
template <typename T>
struct Testbed {
  Testbed(const Options& opt_, const DeviceInfo& device_, std::size_t scratch_bytes = 0, std::size_t more_bytes = 0)
      : opt(opt_),
        device(device_),
        host(new T[std::max<std::int64_t>(fits_on_device(opt.n, sizeof(T), scratch_bytes + more_bytes, device), 1)]),
        in(opt.n),
        flusher(device),
        step_scratch(scratch(scratch_bytes)) {
    fill_input(host.get(), opt.n, opt.pattern, opt.seed);
    CUDA_CHECK(cudaMemcpyAsync(in.get(), host.get(), in.bytes(), cudaMemcpyHostToDevice, stream.get()));
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  }
  // Device scratch of `bytes`, zero-filled before any launch (the contract in step.cuh).
  DeviceBuffer<unsigned char> scratch(std::size_t bytes) const {
    DeviceBuffer<unsigned char> s(bytes);
    if (bytes == 0) return s;
    CUDA_CHECK(cudaMemsetAsync(s.get(), 0, s.bytes(), stream.get()));  // ordered before the launches on stream
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    return s;
  }
  template <typename S, typename Launch>  // Launch: cudaError_t(S* out, int run)
  Runs<S> time(std::int64_t count, Launch&& launch) {
    Runs<S> r = run_slots<S>(opt.warmup, opt.iters, count, flusher, stream.get(), launch);
    const DeviceBuffer<S> probe(std::max<std::int64_t>(count, 1));  // captured, never written
    r.shape = launch_shape(stream.get(), [&](cudaStream_t) { return launch(probe.get(), 0); });
    return r;
  }
  // A rival timed like the step (nothing runs where it is absent); its scratch and results live
  // only while it runs, so the device memory check is its own.
  template <typename S>
  RivalRuns<S> rival(const Rival<T, S>& rv) {
    RivalRuns<S> out;
    out.name = rv.name;
    out.absent = rv.absent;
    out.fields = rv.fields;
    if (!rv.absent.empty()) return out;
    const std::size_t bytes = rv.scratch_bytes ? rv.scratch_bytes(opt.n) : 0;
    ensure_device_memory(bytes + static_cast<std::size_t>(opt.warmup + opt.iters) * rv.count * sizeof(S) + (64 << 20));
    const DeviceBuffer<unsigned char> s = scratch(bytes);
    const auto launch = [&](S* results, int) { return rv.launch(in.get(), opt.n, results, view(s), stream.get()); };
    static_cast<Runs<S>&>(out) = run_slots<S>(opt.warmup, opt.iters, rv.count, flusher, stream.get(), launch);
    return out;
  }
  bool input_unchanged() const { return device_equals_host(in.get(), host.get(), opt.n); }
  // The whole measurement of a step beyond, in one call (defined below): see Measurement.
  template <typename S>
  Measured<S> measure(const Emitter& emit, const Measurement<T, S>& m);

  const Options& opt;  // n is opt.n, held there only
  const DeviceInfo& device;
  std::unique_ptr<T[]> host;
  Stream stream;
  DeviceBuffer<T> in;
  L2Flusher flusher;
  DeviceBuffer<unsigned char> step_scratch;  // the step's, zero-filled (the contract in step.cuh)
};

// Adds a comparison's fields to a report: <name>_median_ms, _min_ms, _max_ms, <name>_gbps (of the
// report's bytes) and vs_<name>, the report's speed over the comparison's (its time over ours); the
// json record keeps its timed samples as <name>_samples_ms. Rivals (below) come through it; a program
// that times a comparison its own way (16's one GPU) calls it directly.
void add_comparison(Report& r, const std::string& name, const Summary& ms);

// Fields of one reduction of the record, named for it: prefixed("cub", {number_field("abs_error", e)})
// holds cub_abs_error. Mains name a rival's fields this way, never by adding strings.
std::vector<Field> prefixed(const std::string& name, std::vector<Field> fields);

// The exception being handled (call it inside a catch) as the suite's exit code, with a one-line
// message on stderr: UsageError 2, NoUsableDevice 77, CudaError 1 (77 when the GPU cannot run this
// build), std::bad_alloc 77 (n names the --n that asked too much host memory), OutputError 1.
int exit_code(const char* program, std::int64_t n);

// Runs body and returns its exit code, or exit_code for what it throws. Then stdout is flushed: output
// that did not arrive (a full disk, a closed pipe: SIGPIPE is ignored so that the write fails) is exit
// 1 with one line, for every executable alike. run_step and run_bench do the same inline.
int guarded_main(const char* program, const std::int64_t& n, const std::function<int()>& body);

// ---------------------------------------------------------------------------------------------
// The plug-in point of the steps beyond the progression (12 and on), in the manner of nccl-tests'
// testEngine: a step fills one Bench record and its main() is one line, run_bench(bench, argc, argv).
// The harness owns everything else: the one command line (the progression's options with the same
// meanings, plus the step's own, from OptionSpec), --help with the same sections, the device, the exit
// codes (exit_code), and the one record format (Emitter: text, csv or json; csv prints its
// header once, then one line per record).
//
// A step's measure() receives the parsed options and the opened device (none when the Bench says it
// opens its own devices, as the multi-GPU step does), states what it measures in one call
// (Testbed::measure with a Measurement, at the end of this file) and hands the record to emit(); a
// sweep emits several. The run's exit code is 0 when every emitted report passed, 1 otherwise (and when
// none was emitted). A program that times in its own way (16's GPUs) fills the record with the pieces
// below, in the order Testbed::measure calls them.
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
// The record's pieces, as Testbed::measure fills them: fill_common (step, lesson, device, n, pattern, seed,
// iters, warmup, runs_total, block, the determinism claim), fill_timing (the timed runs and the launch
// shape), check_runs (every run checked, the first wrong one told), finish (passed, fits_in_l2, the rates),
// the step's own fields, then add_rival for each rival.

Report fill_common(const Bench& bench, const Options& opt, const DeviceInfo& device);
inline Report fill_common(const Emitter& emit, const Options& opt, const DeviceInfo& device) {
  return fill_common(emit.bench(), opt, device);
}

// The timed runs' summary, whether every run gave the bits of the first, and the launch shape the
// first run reported (grid, block, kernels), where it reported one.
void fill_timing(Report& r, const Summary& ms, bool identical, const LaunchShape& shape = {});
template <typename S>
void fill_timing(Report& r, const Runs<S>& runs) {
  fill_timing(r, runs.summary, runs.identical, runs.shape);
}

// Asks verdict(k) for runs k = 0 .. r.runs_total - 1, counts runs_correct, and sets result, reference,
// abs_error, tolerance and exact_check from the run the record shows: the first wrong one, else the
// last. The first wrong run is told in one line on stderr (unless speak is false). Returns the shown run.
int check_runs(Report& r, const std::function<Verdict(int)>& verdict, bool speak = true);

// A rival in the record: absent, the field <name> saying why; else its fields, describe's of the run
// shown (prefixed with its name: cub_bits), its comparison (add_comparison), <name>_passed (every run
// passed verdict, which must depend on the results alone) and <name>_runs_identical. A rival's wrong run is
// told on stderr as a note and does not fail the record: the step is on trial, not the rival (CUB's min does
// not propagate NaN).
struct RivalCheck {
  int correct = 0, total = 0, first_wrong = -1;
  Verdict wrong;  // the first wrong run's
};
void record_rival(Report& r, const std::string& name, const Summary& ms, bool identical, const RivalCheck& check,
                  std::vector<Field> fields);
template <typename S>
void add_rival(Report& r, const RivalRuns<S>& c, const typename RivalRuns<S>::Verdicts& verdict,
               const typename RivalRuns<S>::Describe& describe = {}) {
  if (!c.absent.empty()) {
    r.extra.push_back(text_field(c.name, c.absent));
    return;
  }
  RivalCheck check;
  check.total = c.total();
  Verdict v;
  for (int k = 0; k < check.total; ++k) {
    // A run with the bits of the run before has its verdict: a per-segment check runs once, not per run.
    if (k == 0 || std::memcmp(c.run(k), c.run(k - 1), c.count * sizeof(S)) != 0) v = verdict(c.run(k));
    check.correct += v.passed;
    if (!v.passed && check.first_wrong < 0) check.first_wrong = k, check.wrong = v;
  }
  std::vector<Field> fields = c.fields;
  const int shown = check.first_wrong >= 0 ? check.first_wrong : check.total - 1;
  if (describe && shown >= 0)
    for (Field& f : prefixed(c.name, describe(c.run(shown)))) fields.push_back(std::move(f));
  record_rival(r, c.name, c.summary, c.identical, check, std::move(fields));
}

// The CPU yardsticks over x[0..n) (Report::cpu_ms, cpu_parallel_ms, cpu_threads): the plain loop on one
// core and the vectorized one on all, each the median of `runs` (0: not timed).
void time_cpu_yardsticks(Report& r, const float* x, std::int64_t n, int runs);

// passed (every run correct, the input unchanged, the same bits every run where the step claims it),
// fits_in_l2 (of the bytes read), the rates (derive_rates), and a line on stderr for each failure that
// check_runs did not tell.
void finish(Report& r, bool input_unchanged, bool speak = true);

// What a step beyond measures, stated once (Testbed::measure): its launch, how a run's results are
// checked, its own fields of the run the record shows, and its rivals. The engine times the step and
// each rival alike, checks every run, fills the common record (fill_common, fill_timing, check_runs,
// finish) and then each rival's fields (add_rival); the step's main only emits the record.
template <typename T, typename S = T>
struct Measurement {
  // The step, on the testbed's input, with the testbed's step_scratch.
  std::function<cudaError_t(S* out, Scratch scratch, cudaStream_t stream)> launch;
  std::int64_t count = 1;                            // results per run (one per segment)
  std::function<Verdict(const S* results)> verdict;  // one run's results checked
  std::function<void(Report& r)> before;             // sets what the rates read (bytes, element_name) and the CPU
                                                     // yardsticks; default: time_cpu_yardsticks on the input
  std::function<std::vector<Field>(const S* shown)> fields;  // the step's own, of the run shown
  std::vector<Rival<T, S>> rivals;
  std::function<Verdict(const S* results)> rival_verdict;  // a rival's run checked; default: verdict
  typename RivalRuns<S>::Describe describe;                // a rival's fields of the run shown
};
template <typename S>
struct Measured {
  Report record;
  Runs<S> runs;   // the step's
  int shown = 0;  // the run the record shows: the first wrong one, else the last
  const S* result() const { return runs.run(shown); }
};

template <typename T>
template <typename S>
Measured<S> Testbed<T>::measure(const Emitter& emit, const Measurement<T, S>& m) {
  Measured<S> out;
  out.runs = time<S>(m.count, [&](S* results, int) { return m.launch(results, view(step_scratch), stream.get()); });
  std::vector<RivalRuns<S>> rivals;
  for (const Rival<T, S>& rv : m.rivals) rivals.push_back(rival(rv));
  Report& r = out.record;
  r = fill_common(emit, opt, device);
  r.element_bytes = sizeof(T);
  if (m.before)
    m.before(r);
  else if constexpr (std::is_same_v<T, float>)
    time_cpu_yardsticks(r, host.get(), opt.n, opt.cpu_runs);
  fill_timing(r, out.runs);
  Verdict last;  // a run with the bits of the run checked last has its verdict: a per-segment check runs once
  int checked = -1;
  out.shown = check_runs(r, [&](int k) {
    if (checked < 0 || std::memcmp(out.runs.run(k), out.runs.run(checked), m.count * sizeof(S)) != 0)
      last = m.verdict(out.runs.run(k)), checked = k;
    return last;
  });
  finish(r, input_unchanged());
  if (m.fields) r.extra = m.fields(out.result());
  for (const RivalRuns<S>& c : rivals) add_rival(r, c, m.rival_verdict ? m.rival_verdict : m.verdict, m.describe);
  return out;
}

}  // namespace reduce
