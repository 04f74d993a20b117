// 13_segmented's record for the harness (reduce::Bench): its options (--segments, --offsets), and one
// measurement: the suite's segmented sum and cub::DeviceSegmentedReduce::Sum on the same input, every
// segment of every run checked, both timed the same way.
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "harness.cuh"
#include "segmented.cuh"
#include "segments.hpp"

namespace {

constexpr const char* kName = "13_segmented";
constexpr const char* kLesson = "many sums at once, each segment to a thread, a warp or blocks";

// What the parser cannot see, before any device is touched: --offsets replaces --segments, and must
// name a readable file of valid offsets for n.
void check(const reduce::Options& opt) {
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
  const seg::Offsets offsets =
      file.empty() ? seg::make_offsets(opt.extra.at("--segments"), n, opt.seed) : seg::read_offsets(file);
  seg::validate_offsets(offsets, n);  // before anything runs
  const std::int64_t segments = static_cast<std::int64_t>(offsets.size()) - 1;
  const std::int64_t covered = offsets.back() - offsets.front();
  const int runs = opt.warmup + opt.iters;
  const std::size_t scratch_bytes = seg::scratch_bytes(n), cub_bytes = seg::cub_scratch_bytes(segments);
  reduce::ensure_device_memory(n * sizeof(float) + offsets.size() * 8 + 2 * runs * segments * sizeof(float) +
                               scratch_bytes + cub_bytes + 2 * device.l2_bytes + (64 << 20));

  reduce::Testbed<float> bed(opt, device);
  reduce::DeviceBuffer<std::int64_t> d_offsets(offsets.size());
  CUDA_CHECK(cudaMemcpy(d_offsets.get(), offsets.data(), d_offsets.bytes(), cudaMemcpyHostToDevice));
  const auto scratch = bed.scratch(scratch_bytes), cub_scratch = bed.scratch(cub_bytes);
  const auto mine = bed.time<float>(segments, [&](float* out, int) {
    return seg::launch(bed.in.get(), n, d_offsets.get(), segments, out, reduce::view(scratch), bed.stream.get());
  });
  const auto cub = bed.time<float>(segments, [&](float* out, int) {
    return seg::launch_cub(bed.in.get(), d_offsets.get(), segments, out, reduce::view(cub_scratch), bed.stream.get());
  });
  // Every run equals run 0 bit for bit (Runs::identical), so checking run 0 checks them all.
  const seg::SegmentsCheck check = seg::check_segments(bed.host.get(), offsets, mine.run(0), opt.pattern);
  const seg::SegmentsCheck cub_check = seg::check_segments(bed.host.get(), offsets, cub.run(0), opt.pattern);

  reduce::Report r = reduce::fill_common(emit, opt, device);
  // Bytes counted: the floats inside segments once, and the S + 1 offsets once (CUB reads begin and end
  // offsets, the suite's kernel reads most of them twice; both from cache). Outputs are not counted.
  r.bytes = 4.0 * covered + 8.0 * (segments + 1);
  // The CPU yardsticks: the plain loop over the floats the segments cover, on one core and on all.
  reduce::time_cpu_yardsticks(r, bed.host.get() + offsets.front(), covered, opt.cpu_runs);
  reduce::fill_timing(r, mine);
  // Run 0's every segment is checked; every other run must have its bits.
  reduce::check_runs(r, [&](int k) {
    reduce::Verdict v;
    v.check.exact = check.exact;
    v.passed = check.wrong == 0 && std::memcmp(mine.run(k), mine.run(0), segments * sizeof(float)) == 0;
    if (check.wrong > 0) {
      const std::int64_t s = check.first_wrong;
      v.result = check.first_gpu;
      v.reference = check.first_reference;
      v.check = check.first_check;
      v.what = "segment " + std::to_string(s) + " [" + std::to_string(offsets[s]) + ", " +
               std::to_string(offsets[s + 1]) + ")";
      v.note = std::to_string(check.wrong) + " of " + std::to_string(segments) + " segments wrong";
    } else if (!v.passed) {
      v.what = "a segment";
      v.note = "its bits differ from run 1's";
    }
    return v;
  });
  reduce::finish(r, bed.input_unchanged());

  // Segments by the length bounds of the tiers (segmented.cuh).
  std::int64_t tier[4] = {0, 0, 0, 0};
  for (std::int64_t s = 0; s < segments; ++s) {
    const std::int64_t len = offsets[s + 1] - offsets[s];
    ++tier[len <= seg::kThreadMax ? 0 : len <= seg::kWarpMax ? 1 : len <= seg::kTile ? 2 : 3];
  }
  r.extra = {reduce::text_field("distribution", file.empty() ? opt.extra.at("--segments") : "file:" + file),
             reduce::number_field("segments", static_cast<double>(segments)),
             reduce::number_field("mean_len", segments > 0 ? static_cast<double>(covered) / segments : 0.0),
             reduce::number_field("wrong_segments", static_cast<double>(check.wrong)),
             reduce::number_field("len_le_32", static_cast<double>(tier[0])),
             reduce::number_field("len_le_2048", static_cast<double>(tier[1])),
             reduce::number_field("len_le_16384", static_cast<double>(tier[2])),
             reduce::number_field("len_longer", static_cast<double>(tier[3])),
             reduce::bool_field("cub_passed", cub_check.wrong == 0),
             reduce::bool_field("cub_runs_identical", cub.identical)};
  reduce::add_comparison(r, "cub", cub.summary);

  if (cub_check.wrong > 0 || !cub.identical)
    std::fprintf(stderr, "%s: note: CUB's result %s\n", kName,
                 cub_check.wrong > 0 ? "failed the same check" : "differed between runs");
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
                  {"--offsets", {}, "a file of S + 1 integers (white space between) instead of --segments", "FILE"}};
  b.spec.block = reduce::BlockRule::inside("13_segmented chooses its own launch shape per segment length");
  b.spec.notes =
      "Besides the step, the run times cub::DeviceSegmentedReduce::Sum on the same input (cub_median_ms,\n"
      "cub_gbps, vs_cub in the record). Bytes counted: 4 per float inside a segment and 8 per offset.\n"
      "--cpu-runs times the plain loop over the floats the segments cover (one core; all cores).";
  b.check = check;
  b.measure = measure;
  return b;
}

}  // namespace

int main(int argc, char** argv) { return reduce::run_bench(make_bench(), argc, argv); }
