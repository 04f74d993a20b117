// 13_segmented's record for the harness (reduce::Bench): its options (--segments, --offsets, --search,
// --segment-size), and one measurement: the suite's segmented sum and cub::DeviceSegmentedReduce::Sum
// (the toolkit's, and the newest CUB's offsets and fixed-size overloads when configure found one) on the
// same input, every segment of every run checked, all timed the same way.
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cub35.hpp"
#include "harness.cuh"
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
    if (opt.has("--search"))
      throw reduce::UsageError("--search applies to offsets; with --segment-size every block computes its own");
    const std::int64_t len = *reduce::parse_count(opt.extra.at("--segment-size"));
    if (len > opt.n)
      throw reduce::UsageError("--segment-size " + std::to_string(len) + " is longer than n = " + std::to_string(opt.n) +
                               ": no whole segment");
    return;
  }
  if (!opt.has("--offsets")) return;
  if (opt.has("--segments")) throw reduce::UsageError("--offsets replaces --segments: give one of them");
  seg::validate_offsets(seg::read_offsets(opt.extra.at("--offsets")), opt.n);
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
  const std::string search_name = opt.extra.at("--search");
  const seg::Search search = search_name == "kernel" ? seg::Search::kernel
                             : search_name == "block" ? seg::Search::block
                                                      : seg::Search::automatic;
  const bool cub35 = seg::cub35::available();
  const int runs = opt.warmup + opt.iters;
  const std::size_t scratch_bytes = seg::scratch_bytes(n), cub_bytes = seg::cub_scratch_bytes(segments);
  const std::size_t cub35_bytes = cub35 ? seg::cub35::scratch_bytes(segments, equal_length) : 0;
  reduce::ensure_device_memory(n * sizeof(float) + offsets.size() * 8 + 4 * runs * segments * sizeof(float) +
                               scratch_bytes + cub_bytes + cub35_bytes + 2 * device.l2_bytes + (64 << 20));

  reduce::Testbed<float> bed(opt, device);
  reduce::DeviceBuffer<std::int64_t> d_offsets(offsets.size());
  CUDA_CHECK(cudaMemcpy(d_offsets.get(), offsets.data(), d_offsets.bytes(), cudaMemcpyHostToDevice));
  const auto scratch = bed.scratch(scratch_bytes), cub_scratch = bed.scratch(cub_bytes);
  const auto cub35_scratch = bed.scratch(cub35_bytes);
  const auto mine = bed.time<float>(segments, [&](float* out, int) {
    const reduce::Scratch sc = reduce::view(scratch);
    return fixed > 0 ? seg::launch_fixed(bed.in.get(), n, fixed, segments, out, sc, bed.stream.get())
                     : seg::launch(bed.in.get(), n, d_offsets.get(), segments, out, sc, bed.stream.get(), search);
  });
  const auto cub = bed.time<float>(segments, [&](float* out, int) {
    return seg::launch_cub(bed.in.get(), d_offsets.get(), segments, out, reduce::view(cub_scratch), bed.stream.get());
  });
  // Every run equals run 0 bit for bit (Runs::identical), so checking run 0 checks them all.
  const seg::SegmentsCheck check = seg::check_segments(bed.host.get(), offsets, mine.run(0), opt.pattern);
  const seg::SegmentsCheck cub_check = seg::check_segments(bed.host.get(), offsets, cub.run(0), opt.pattern);
  // The newest CUB, both overloads where they apply (fixed-size: every segment of one length).
  reduce::Runs<float> cub35_offsets, cub35_fixed;
  bool cub35_passed = true, cub35_identical = true;
  if (cub35) {
    cub35_offsets = bed.time<float>(segments, [&](float* out, int) {
      return seg::cub35::sum(bed.in.get(), d_offsets.get(), segments, out, cub35_scratch.get(), cub35_scratch.bytes(),
                             bed.stream.get());
    });
    cub35_passed = seg::check_segments(bed.host.get(), offsets, cub35_offsets.run(0), opt.pattern).wrong == 0;
    cub35_identical = cub35_offsets.identical;
    if (equal_length > 0) {
      cub35_fixed = bed.time<float>(segments, [&](float* out, int) {
        return seg::cub35::sum_fixed(bed.in.get() + offsets.front(), segments, equal_length, out, cub35_scratch.get(),
                                     cub35_scratch.bytes(), bed.stream.get());
      });
      cub35_passed = cub35_passed && seg::check_segments(bed.host.get(), offsets, cub35_fixed.run(0), opt.pattern).wrong == 0;
      cub35_identical = cub35_identical && cub35_fixed.identical;
    }
  }

  reduce::Report r = reduce::fill_common(emit, opt, device);
  // Bytes counted: the floats inside segments once, and the S + 1 offsets once (CUB reads begin and end
  // offsets, the suite's kernel reads most of them twice; both from cache); no offsets with --segment-size,
  // where the step reads none. Outputs are not counted.
  r.bytes = 4.0 * covered + (fixed > 0 ? 0.0 : 8.0 * (segments + 1));
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

  const std::string distribution = fixed > 0     ? "fixed:" + std::to_string(fixed)
                                   : file.empty() ? opt.extra.at("--segments")
                                                  : "file:" + file;
  r.extra = {reduce::text_field("distribution", distribution),
             reduce::number_field("segments", static_cast<double>(segments)),
             reduce::number_field("mean_len", segments > 0 ? static_cast<double>(covered) / segments : 0.0),
             reduce::number_field("wrong_segments", static_cast<double>(check.wrong)),
             // Where each tile's first segment was found: by a kernel of its own, by each block, or
             // computed (--segment-size).
             reduce::text_field("search", fixed > 0 ? "computed"
                                          : seg::search_in_kernel(n, segments, search) ? "kernel"
                                                                                       : "block"),
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
                   }},
                  {"--search", {"auto", "kernel", "block"},
                   "where each tile's first segment is found in the offsets: auto (a kernel of its own where\n"
                   "                     the segments outnumber the tiles of 32768 floats, else each block),\n"
                   "                     kernel, or block (the record's \"search\" says which ran)"}};
  b.spec.block = reduce::BlockRule::inside("13_segmented chooses its own launch shape per segment length");
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
