// 14_reproducible's record for the harness (reduce::Bench): one run of the step, and in the same run
// step 10, CUB's DeviceReduce::Sum (the toolkit's) and, where built, CUB's gpu_to_gpu sum, each timed
// the same way and each compared with the exact sum of the input. The step's result must have the
// bits of the CPU model of its order (order.hpp), which is what "the same bits on any GPU" means.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "bits.hpp"
#include "exact_sum.hpp"
#include "harness.cuh"
#include "reproducible.cuh"
#include "rivals.cuh"

namespace {

bool same_bits(float a, float b) { return std::isnan(a) ? std::isnan(b) : std::memcmp(&a, &b, sizeof a) == 0; }

void measure(const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
  const std::int64_t n = opt.n;
  const std::int64_t grid = opt.extra.at("--grid").empty() ? 0 : std::stoll(opt.extra.at("--grid"));
  const reduce::LaunchConfig cfg{opt.block, device.ordinal, device.sm_count, grid};
  const std::size_t scratch_bytes = step14::scratch_bytes(n, cfg);
  reduce::Testbed<float> bed(opt, device, scratch_bytes);
  const reduce::Reference ref = reduce::reference_sum(bed.host.get(), n);
  const reduce::ExactSum exact = reduce::exact_sum(bed.host.get(), n);
  const float model = step14::model_sum(bed.host.get(), n);
  const auto scratch = bed.scratch(scratch_bytes);
  const auto mine = bed.time<float>(1, [&](float* out, int k) {
    return step14::launch(bed.in.get(), n, out, reduce::view(scratch), cfg, bed.stream.get());
  });
  const auto ten = bed.rival(reduce::rivals::step10(device)), cub = bed.rival(reduce::rivals::cub(device));
  const auto g2g = bed.rival(reduce::rivals::cub_g2g());

  reduce::Report r = reduce::fill_common(emit, opt, device);
  float cpu_result = 0.0f;
  r.cpu_ms = reduce::time_cpu_sum(bed.host.get(), n, opt.cpu_runs, &cpu_result);
  reduce::fill_timing(r, mine);
  // Every run must be within the suite's tolerance and have the model's bits.
  const float shown = *mine.run(reduce::check_runs(r, [&](int k) {
    const float x = *mine.run(k);
    reduce::Verdict v(x, ref, n, opt.pattern);
    v.passed = (v.passed || (std::isnan(x) && std::isnan(model)) || (std::isinf(x) && x == model)) && same_bits(x, model);
    v.note = "bits " + step14::bits_text(x) + ", the order's CPU model gives " + step14::bits_text(model);
    return v;
  }));
  reduce::finish(r, bed.input_unchanged());

  // Each sum's error against the exact sum: |x - exact| and that over |exact| (0 when both are 0, inf
  // when only the exact sum is 0); a rival's bits besides (the step's are result_bits).
  const auto errors = [&](const float* x) {
    const double abs_error = exact.error_of(*x), e = std::fabs(exact.to_double());
    return std::vector<reduce::Field>{
        reduce::number_field("abs_error", abs_error),
        reduce::number_field("rel_error", abs_error == 0 ? 0.0 : (e > 0 ? abs_error / e : INFINITY))};
  };
  const auto errors_and_bits = [&](const float* x) {
    std::vector<reduce::Field> f = errors(x);
    f.push_back(reduce::text_field("bits", step14::bits_text(*x)));
    return f;
  };
  r.extra = {reduce::text_field("result_bits", step14::bits_text(shown)),
             reduce::text_field("model_bits", step14::bits_text(model)),
             reduce::number_field("tile_elements", static_cast<double>(step14::tile_elements(n))),
             reduce::number_field("tiles", static_cast<double>(step14::num_tiles(n))),
             reduce::text_field("exact_sum", reduce::exact_text(exact.to_double()))};
  for (reduce::Field& f : reduce::prefixed("step", errors(&shown))) r.extra.push_back(std::move(f));
  // The rivals: within the suite's tolerance of the double reference (NaN and inf matched as they are).
  const auto sum_verdict = [&](const float* x) { return reduce::sum_verdict(*x, ref, n, opt.pattern); };
  for (const auto* rival : {&ten, &cub, &g2g}) reduce::add_rival(r, *rival, sum_verdict, errors_and_bits);
  emit(r);
}

reduce::Bench make_bench() {
  reduce::Bench b{"14_reproducible", step14::kStep.lesson};
  b.spec.summary = "Sums n floats on the GPU with the same bits whatever the grid, the block size and the GPU";
  reduce::ExtraOption grid{"--grid", {}, "blocks (default: one per tile up to SMs x resident blocks per SM, past that the\n"
                           "                   tiles spread evenly over the fewest rounds): imitates another GPU; the\n"
                           "                   result's bits must not change", "N"};
  grid.check = reduce::integer_in(1, 0x7fffffff);
  b.spec.extra = {grid};
  for (reduce::Pattern p : {reduce::Pattern::nan, reduce::Pattern::inf}) b.spec.patterns.push_back(p);
  b.spec.block = step14::kStep.block;
  b.spec.notes =
      "The result must have the bits of the CPU model of the step's order (order.hpp). The same run times step 10,\n"
      "CUB's DeviceReduce::Sum (toolkit CCCL) and, when built with a CCCL 3.5 (-DCCCL_DIR), CUB's gpu_to_gpu sum;\n"
      "the record gives each as <name>_gbps and vs_<name>, each one's error against the exact sum\n"
      "(<name>_abs_error, <name>_rel_error), its bits and whether it passed the suite's check (<name>_passed).";
  b.measure = measure;
  return b;
}

}  // namespace

int main(int argc, char** argv) { return reduce::run_bench(make_bench(), argc, argv); }
