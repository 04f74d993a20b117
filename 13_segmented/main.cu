// 13_segmented's record for the harness (reduce::Bench): the suite's segmented sum, and in the same run
// its rivals, declared once each and timed, checked and recorded by the engine: the toolkit's
// cub::DeviceSegmentedReduce::Sum and, when configure found a CCCL 3.5 or newer, that CUB's fixed-size
// and offsets overloads. Every segment of every run is checked. The options live in segments.cpp.
#include <climits>
#include <cstring>
#include <string>

#include "cub35.hpp"
#include "harness.cuh"
#include "segmented.cuh"
#include "segments.hpp"

namespace {

void measure(const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
  const std::int64_t n = opt.n;
  const step13::Layout layout = step13::layout_of(opt);  // validated before anything runs
  const step13::Offsets& offsets = layout.offsets;
  const std::int64_t fixed = layout.fixed, segments = static_cast<std::int64_t>(offsets.size()) - 1;
  const std::int64_t covered = offsets.back() - offsets.front();
  // > 0: every segment has this length, which CUB 3.5's fixed-size overload takes (an int there).
  const std::int64_t equal_length = step13::equal_length(offsets) <= INT_MAX ? step13::equal_length(offsets) : 0;
  const std::string& search_name = opt.extra.at("--search");
  const step13::Search search = search_name == "kernel" ? step13::Search::kernel
                             : search_name == "block" ? step13::Search::block
                                                      : step13::Search::automatic;
  reduce::Testbed<float> bed(opt, device, offsets.size() * 8 + 4 * (opt.warmup + opt.iters) * segments * sizeof(float) +
                                              step13::scratch_bytes(n));
  reduce::DeviceBuffer<std::int64_t> d_offsets(offsets.size());
  CUDA_CHECK(cudaMemcpy(d_offsets.get(), offsets.data(), d_offsets.bytes(), cudaMemcpyHostToDevice));
  const auto scratch = bed.scratch(step13::scratch_bytes(n));
  const auto mine = bed.time<float>(segments, [&](float* out, int) {
    const reduce::Scratch sc = reduce::view(scratch);
    return fixed > 0 ? step13::launch_fixed(bed.in.get(), n, fixed, segments, out, sc, bed.stream.get())
                     : step13::launch(bed.in.get(), n, d_offsets.get(), segments, out, sc, bed.stream.get(), search);
  });
  // The rivals: the toolkit's CUB on the offsets, then CUB 3.5's fixed-size overload (every segment of
  // one length) and its offsets overload. "vs x" in the record is this step over x.
  using Rival = reduce::Rival<float>;
  const bool cub35 = step13::cub35::available();
  const std::string absent35 = cub35 ? "" : step13::cub35::why_absent();
  const Rival cub{"cub", [&](std::int64_t) { return step13::cub_scratch_bytes(segments); },
                  [&](const float* in, std::int64_t, float* out, reduce::Scratch s, cudaStream_t st) {
                    return step13::launch_cub(in, d_offsets.get(), segments, out, s, st);
                  }, segments};
  const Rival cub35_fixed{"cub35_fixed", [&](std::int64_t) { return step13::cub35::scratch_bytes(segments, equal_length); },
                          [&](const float* in, std::int64_t, float* out, reduce::Scratch s, cudaStream_t st) {
                            return step13::cub35::sum_fixed(in + offsets.front(), segments, equal_length, out, s.data, s.bytes, st);
                          }, segments, equal_length > 0 ? absent35 : "segments of more than one length"};
  const Rival cub35_offsets{"cub35", [&](std::int64_t) { return step13::cub35::scratch_bytes(segments, 0); },
                            [&](const float* in, std::int64_t, float* out, reduce::Scratch s, cudaStream_t st) {
                              return step13::cub35::sum(in, d_offsets.get(), segments, out, s.data, s.bytes, st);
                            }, segments, absent35,
                            {reduce::text_field("cub35_version", cub35 ? step13::cub35::cccl_version() : "")}};
  const auto rivals = {bed.rival(cub), bed.rival(cub35_fixed), bed.rival(cub35_offsets)};

  reduce::Report r = reduce::fill_common(emit, opt, device);
  // Bytes counted: the floats inside segments once, and the S + 1 offsets once (none with --segment-size,
  // where the step reads none). Outputs are not counted.
  r.bytes = 4.0 * covered + (fixed > 0 ? 0.0 : 8.0 * (segments + 1));
  reduce::time_cpu_yardsticks(r, bed.host.get() + offsets.front(), covered, opt.cpu_runs);
  reduce::fill_timing(r, mine);
  // Every run equals run 0 bit for bit (Runs::identical), so run 0's every segment is checked.
  const step13::SegmentsCheck check = step13::check_segments(bed.host.get(), offsets, mine.run(0), opt.pattern);
  const auto verdict = [&](const step13::SegmentsCheck& c) {
    reduce::Verdict v;
    v.check = c.first_check;
    v.check.exact = c.exact;
    v.passed = c.wrong == 0;
    if (c.wrong > 0) {
      const std::int64_t s = c.first_wrong;
      v.result = c.first_gpu;
      v.reference = c.first_reference;
      v.what = "segment " + std::to_string(s) + " [" + std::to_string(offsets[s]) + ", " + std::to_string(offsets[s + 1]) + ")";
      v.note = std::to_string(c.wrong) + " of " + std::to_string(segments) + " segments wrong";
    }
    return v;
  };
  reduce::check_runs(r, [&](int k) {
    reduce::Verdict v = verdict(check);
    if (v.passed && std::memcmp(mine.run(k), mine.run(0), segments * sizeof(float)) != 0)
      v.passed = false, v.what = "a segment", v.note = "its bits differ from run 1's";
    return v;
  });
  reduce::finish(r, bed.input_unchanged());
  r.extra = {reduce::text_field("distribution", layout.distribution),
             reduce::number_field("segments", static_cast<double>(segments)),
             reduce::number_field("mean_len", segments > 0 ? static_cast<double>(covered) / segments : 0.0),
             reduce::number_field("wrong_segments", static_cast<double>(check.wrong)),
             // Where each tile's first segment was found: by a kernel of its own, by each block, or
             // computed (--segment-size).
             reduce::text_field("search", fixed > 0 ? "computed" : step13::search_in_kernel(n, segments, search) ? "kernel" : "block")};
  for (const auto& rival : rivals)
    reduce::add_rival(r, rival, [&](const float* x) { return verdict(step13::check_segments(bed.host.get(), offsets, x, opt.pattern)); });
  emit(r);
}

reduce::Bench make_bench() {
  reduce::Bench b{"13_segmented", "many sums at once, each segment to a thread, a warp or blocks"};
  b.spec.summary = "Sums S segments of n floats, given by 64-bit offsets, into S outputs on the GPU";
  b.spec.extra = step13::options();
  b.spec.block = reduce::BlockRule::inside("13_segmented chooses its own launch shape per segment length");
  b.spec.notes =
      "Besides the step, the run times cub::DeviceSegmentedReduce::Sum on the same input (cub_median_ms,\n"
      "cub_gbps, vs_cub in the record), and, when built with a CCCL 3.5 or newer (-DCCCL_DIR), that CUB's\n"
      "offsets overload (cub35_*) and, where every segment has one length, its fixed-size overload\n"
      "(cub35_fixed_*). Bytes counted: 4 per float inside a segment and 8 per offset (none with\n"
      "--segment-size).\n"
      "--cpu-runs times the plain loop over the floats the segments cover (one core; all cores).";
  b.check = step13::check_options;
  b.measure = measure;
  return b;
}

}  // namespace

int main(int argc, char** argv) { return reduce::run_bench(make_bench(), argc, argv); }
