// 13_segmented's record for the harness (reduce::Bench): its options (--segments, --offsets,
// --segment-size), and one measurement: the suite's segmented sum and cub::DeviceSegmentedReduce::Sum
// (the toolkit's, and the newest CUB's offsets and fixed-size overloads when configure found one) on the
// same input, every segment of every run checked, all timed the same way.
#include <sys/stat.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cub35.hpp"
#include "harness.cuh"
#include "input.hpp"
#include "segmented.cuh"
#include "segments.hpp"

namespace {

constexpr const char* kName = "13_segmented";
constexpr const char* kLesson = "many sums at once, each segment to a thread, a warp or blocks";

// What the parser cannot see, before any device is touched: --offsets replaces --segments, and must
// name a readable file of valid offsets for n.
void check(const reduce::Options& opt) {
  if (opt.has("--segment-size")) {
    if (opt.has("--segments") || opt.has("--offsets"))
      throw reduce::UsageError("--segment-size replaces --segments and --offsets: give one of them");
    const std::int64_t len = *reduce::parse_count(opt.extra.at("--segment-size"));
    if (len > opt.n)
      throw reduce::UsageError("--segment-size " + std::to_string(len) + " is longer than n = " + std::to_string(opt.n) +
                               ": no whole segment");
    return;
  }
  if (!opt.has("--offsets")) return;
  if (opt.has("--segments")) throw reduce::UsageError("--offsets replaces --segments: give one of them");
  const std::string& path = opt.extra.at("--offsets");
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw reduce::UsageError("--offsets " + path + ": cannot read it (no such file)");
  if (S_ISDIR(st.st_mode)) throw reduce::UsageError("--offsets " + path + ": cannot read it (a folder, not a file)");
  seg::validate_offsets(seg::read_offsets(path), opt.n);
}

void measure(const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
  const std::int64_t n = opt.n;
  const std::string file = opt.extra.at("--offsets");
  // --segment-size L: segments of L floats from in[0], as many as fit (the floats after them belong to
  // none); the offsets exist only for the CPU check and for the CUBs' offsets overloads, never read by
  // the step.
  const std::int64_t fixed = opt.has("--segment-size") ? *reduce::parse_count(opt.extra.at("--segment-size")) : 0;
  const seg::Offsets offsets = fixed > 0       ? seg::fixed_offsets(n, fixed)
                               : file.empty() ? seg::make_offsets(opt.extra.at("--segments"), n, opt.seed)
                                              : seg::read_offsets(file);
  seg::validate_offsets(offsets, n);  // before anything runs
  const std::int64_t segments = static_cast<std::int64_t>(offsets.size()) - 1;
  const std::int64_t covered = offsets.back() - offsets.front();
  // > 0: every segment has this length, which CUB 3.5's fixed-size overload takes (an int there).
  const std::int64_t equal_length = seg::equal_length(offsets) <= INT_MAX ? seg::equal_length(offsets) : 0;
  const bool cub35 = seg::cub35::available();
  const int runs = opt.warmup + opt.iters;
  const std::size_t scratch_bytes = seg::scratch_bytes(n), cub_bytes = seg::cub_scratch_bytes(segments);
  const std::size_t cub35_bytes = cub35 ? seg::cub35::scratch_bytes(segments, equal_length) : 0;
  reduce::ensure_device_memory(n * sizeof(float) + offsets.size() * 8 + 4 * runs * segments * sizeof(float) +
                               scratch_bytes + cub_bytes + cub35_bytes + 2 * device.l2_bytes + (64 << 20));

  std::unique_ptr<float[]> host(new float[std::max<std::int64_t>(n, 1)]);
  reduce::fill_input(host.get(), n, opt.pattern, opt.seed);
  // The CPU yardsticks: the plain loop over the floats the segments cover, on one core and on all.
  float cpu_result = 0.0f;
  int cpu_threads = 0;
  const float* first = host.get() + offsets.front();
  const double cpu_ms = reduce::time_cpu_sum(first, covered, opt.cpu_runs, &cpu_result);
  const double cpu_parallel_ms = reduce::time_cpu_sum_parallel(first, covered, opt.cpu_runs, &cpu_result, &cpu_threads);

  reduce::Stream stream;
  reduce::DeviceBuffer<float> in(n);
  reduce::DeviceBuffer<std::int64_t> d_offsets(offsets.size());
  reduce::DeviceBuffer<unsigned char> scratch(scratch_bytes), cub_scratch(cub_bytes), cub35_scratch(cub35_bytes);
  reduce::L2Flusher flusher(device);
  CUDA_CHECK(cudaMemcpy(in.get(), host.get(), in.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_offsets.get(), offsets.data(), d_offsets.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(scratch.get(), 0, scratch.bytes()));

  const reduce::Runs<float> mine = reduce::run_slots<float>(opt.warmup, opt.iters, segments, flusher, stream.get(),
                                                            [&](float* out, int) {
    const reduce::Scratch sc{scratch.get(), scratch.bytes()};
    return fixed > 0 ? seg::launch_fixed(in.get(), n, fixed, segments, out, sc, stream.get())
                     : seg::launch(in.get(), n, d_offsets.get(), segments, out, sc, stream.get());
  });
  const reduce::Runs<float> cub = reduce::run_slots<float>(opt.warmup, opt.iters, segments, flusher, stream.get(),
                                                           [&](float* out, int) {
    return seg::launch_cub(in.get(), d_offsets.get(), segments, out, {cub_scratch.get(), cub_scratch.bytes()},
                           stream.get());
  });
  // Every run equals run 0 bit for bit (Runs::identical), so checking run 0 checks them all.
  const seg::SegmentsCheck check = seg::check_segments(host.get(), offsets, mine.run(0), opt.pattern);
  const seg::SegmentsCheck cub_check = seg::check_segments(host.get(), offsets, cub.run(0), opt.pattern);
  // The newest CUB, both overloads where they apply (fixed-size: every segment of one length).
  reduce::Runs<float> cub35_offsets, cub35_fixed;
  bool cub35_passed = true, cub35_identical = true;
  if (cub35) {
    cub35_offsets = reduce::run_slots<float>(opt.warmup, opt.iters, segments, flusher, stream.get(), [&](float* out, int) {
      return seg::cub35::sum(in.get(), d_offsets.get(), segments, out, cub35_scratch.get(), cub35_scratch.bytes(),
                             stream.get());
    });
    cub35_passed = seg::check_segments(host.get(), offsets, cub35_offsets.run(0), opt.pattern).wrong == 0;
    cub35_identical = cub35_offsets.identical;
    if (equal_length > 0) {
      cub35_fixed = reduce::run_slots<float>(opt.warmup, opt.iters, segments, flusher, stream.get(), [&](float* out, int) {
        return seg::cub35::sum_fixed(in.get() + offsets.front(), segments, equal_length, out, cub35_scratch.get(),
                                     cub35_scratch.bytes(), stream.get());
      });
      cub35_passed = cub35_passed && seg::check_segments(host.get(), offsets, cub35_fixed.run(0), opt.pattern).wrong == 0;
      cub35_identical = cub35_identical && cub35_fixed.identical;
    }
  }

  reduce::Report r;
  r.step = kName;
  r.lesson = kLesson;
  r.device = device;
  r.n = n;
  // Bytes counted: the floats inside segments once, and the S + 1 offsets once (CUB reads begin and end
  // offsets, both from cache); no offsets with --segment-size, where the step reads none. Outputs are not
  // counted.
  r.bytes = 4.0 * covered + (fixed > 0 ? 0.0 : 8.0 * (segments + 1));
  r.pattern = opt.pattern;
  r.seed = opt.seed;
  r.iters = opt.iters;
  r.warmup = opt.warmup;
  r.ms = mine.summary;
  r.cpu_ms = cpu_ms;
  r.cpu_parallel_ms = cpu_parallel_ms;
  r.cpu_threads = cpu_threads;
  r.deterministic = true;
  r.runs_total = runs;
  r.runs_identical = mine.identical;
  r.runs_correct = check.wrong == 0 && mine.identical ? runs : 0;
  r.fits_in_l2 = r.bytes <= device.l2_bytes;
  r.exact_check = check.exact;
  if (check.wrong > 0) {
    r.result = check.first_gpu;
    r.reference = check.first_reference;
    r.abs_error = check.first_check.abs_error;
    r.tolerance = check.first_check.tolerance;
  }
  r.input_unchanged = reduce::device_equals_host(in.get(), host.get(), n);
  r.passed = check.wrong == 0 && mine.identical && r.input_unchanged;
  reduce::derive_rates(r);

  const std::string distribution = fixed > 0     ? "fixed:" + std::to_string(fixed)
                                   : file.empty() ? opt.extra.at("--segments")
                                                  : "file:" + file;
  r.extra = {reduce::text_field("distribution", distribution),
             reduce::number_field("segments", static_cast<double>(segments)),
             reduce::number_field("mean_len", segments > 0 ? static_cast<double>(covered) / segments : 0.0),
             reduce::number_field("wrong_segments", static_cast<double>(check.wrong)),
             reduce::bool_field("cub_passed", cub_check.wrong == 0),
             reduce::bool_field("cub_runs_identical", cub.identical),
             cub35 ? reduce::text_field("cub35_version", seg::cub35::cccl_version())
                   : reduce::text_field("cub35_absent", seg::cub35::why_absent())};
  if (cub35) {
    r.extra.push_back(reduce::bool_field("cub35_passed", cub35_passed));
    r.extra.push_back(reduce::bool_field("cub35_runs_identical", cub35_identical));
  }
  // The toolkit's CUB (offsets), then the newest CUB's fixed-size overload where it applies and its
  // offsets overload: "vs x" is this step over x.
  reduce::add_comparison(r, "cub", cub.summary);
  if (cub35 && equal_length > 0) reduce::add_comparison(r, "cub35_fixed", cub35_fixed.summary);
  if (cub35) reduce::add_comparison(r, "cub35", cub35_offsets.summary);

  if (!r.input_unchanged) std::fprintf(stderr, "%s: the input was modified\n", kName);
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
  if (!cub35_passed || !cub35_identical)
    std::fprintf(stderr, "%s: note: CUB %s's result %s\n", kName, seg::cub35::cccl_version(),
                 !cub35_passed ? "failed the same check" : "differed between runs");
  emit(r);
}

reduce::Bench make_bench() {
  reduce::Bench b{kName, kLesson};
  b.spec.summary = "Sums S segments of n floats, given by 64-bit offsets, into S outputs on the GPU";
  std::vector<std::string> names;
  std::string described = "the distribution of segment lengths over n floats:";
  for (const seg::Distribution& d : seg::distributions()) {
    names.push_back(d.name);
    described += "\n                     " + std::string(d.name) + std::string(12 - std::strlen(d.name), ' ') + d.description;
  }
  // powerlaw first: the default, a mix of every tier.
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == "powerlaw") std::swap(names[i], names[0]);
  b.spec.extra = {{"--segments", names, described},
                  {"--offsets", {}, "a file of S + 1 integers (white space between) instead of --segments", "FILE"},
                  {"--segment-size", {}, "segments of L floats each (n / L of them), no offsets read: the fixed-size mode",
                   "L", "", false, [](const std::string& v) -> std::string {
                     const auto len = reduce::parse_count(v);
                     return len && *len >= 1 ? "" : "a segment length from 1 to n: 16, 1000, 4K or 2^10";
                   }}};
  b.spec.block_refused = "13_segmented chooses its own launch shape per segment length";
  b.spec.notes =
      "Besides the step, the run times cub::DeviceSegmentedReduce::Sum on the same input (cub_median_ms,\n"
      "cub_gbps, vs_cub in the record), and, when built with a CCCL 3.5 or newer (-DCCCL_DIR), that CUB's\n"
      "offsets overload (cub35_*) and, where every segment has one length, its fixed-size overload\n"
      "(cub35_fixed_*). Bytes counted: 4 per float inside a segment and 8 per offset (none with\n"
      "--segment-size).\n"
      "--cpu-runs times the plain loop over the floats the segments cover (one core; all cores).";
  b.check = check;
  b.measure = measure;
  return b;
}

}  // namespace

int main(int argc, char** argv) { return reduce::run_bench(make_bench(), argc, argv); }
