// 13_segmented's record for the harness (reduce::Bench): the suite's segmented sum, and in the same run
// its rivals, declared once each and timed, checked and recorded by the engine: the toolkit's
// cub::DeviceSegmentedReduce::Sum and, when configure found a CCCL 3.5 or newer, that CUB's fixed-size
// and offsets overloads. Every segment of every run is checked. The options live in segments.cpp.
#include <climits>
#include <string>
#include <vector>

#include "harness.cuh"
#include "rivals.cuh"
#include "segmented.cuh"
#include "segments.hpp"

namespace {

void measure(const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
  const step13::Layout layout = step13::layout_of(opt);  // validated before anything runs
  const step13::Offsets& offsets = layout.offsets;
  const std::int64_t fixed = layout.fixed, segments = static_cast<std::int64_t>(offsets.size()) - 1;
  const std::int64_t covered = offsets.back() - offsets.front();
  // > 0: every segment has this length, which CUB 3.5's fixed-size overload takes (an int there).
  const std::int64_t equal_length = step13::equal_length(offsets) <= INT_MAX ? step13::equal_length(offsets) : 0;
  const std::string& how = step13::args().search;
  const auto search = how == "kernel"  ? step13::Search::kernel
                      : how == "block" ? step13::Search::block
                                       : step13::Search::automatic;
  // More device memory: the offsets, and the results of the step's and three rivals' runs.
  reduce::Testbed<float> bed(opt, device, step13::scratch_bytes(opt.n),
                             offsets.size() * 8 + 4 * (opt.warmup + opt.iters) * segments * sizeof(float));
  reduce::DeviceBuffer<std::int64_t> d_offsets(offsets.size());
  CUDA_CHECK(cudaMemcpy(d_offsets.get(), offsets.data(), d_offsets.bytes(), cudaMemcpyHostToDevice));
  step13::SegmentsCheck check;  // of the run checked last
  reduce::Measurement<float> m;
  m.count = segments;
  m.launch = [&](float* out, reduce::Scratch sc, cudaStream_t st) {
    return fixed > 0 ? step13::launch_fixed(bed.in.get(), opt.n, fixed, segments, out, sc, st)
                     : step13::launch(bed.in.get(), opt.n, d_offsets.get(), segments, out, sc, st, search);
  };
  m.verdict = [&](const float* x) {  // every segment of the run
    check = step13::check_segments(bed.host.get(), offsets, x, opt.pattern);
    return step13::verdict_of(check, offsets);
  };
  m.before = [&](reduce::Report& r) {  // bytes: the floats inside segments, the S + 1 offsets (--segment-size: none)
    r.bytes = 4.0 * covered + (fixed > 0 ? 0.0 : 8.0 * (segments + 1));
    reduce::time_cpu_yardsticks(r, bed.host.get() + offsets.front(), covered, opt.cpu_runs);
  };
  m.fields = [&](const float*) {  // search: where each tile's first segment was found (kernel, block, computed)
    const bool kernel = step13::search_in_kernel(opt.n, segments, search);
    return std::vector<reduce::Field>{reduce::text_field("distribution", layout.distribution),
                                      reduce::number_field("segments", double(segments)),
                                      reduce::number_field("mean_len", segments > 0 ? double(covered) / segments : 0.0),
                                      reduce::number_field("wrong_segments", double(check.wrong)),
                                      reduce::text_field("search", fixed > 0 ? "computed"
                                                                   : kernel  ? "kernel"
                                                                             : "block")};
  };
  // The rivals (rivals.cuh): "vs x" in the record is this step over x.
  m.rivals = step13::rivals(d_offsets.get(), offsets.front(), segments, equal_length);
  emit(bed.measure(emit, m).record);
}

}  // namespace

int main(int argc, char** argv) {
  reduce::Bench b{"13_segmented", "many sums at once, each segment to a thread, a warp or blocks"};
  b.spec = step13::spec();
  b.check = step13::check_options;
  b.measure = measure;
  return reduce::run_bench(b, argc, argv);
}
