// 14_reproducible's record for the harness (reduce::Bench): one run of the step, and in the same run
// step 10, CUB's DeviceReduce::Sum (the toolkit's) and, where built, CUB's gpu_to_gpu sum, each timed
// the same way and each compared with the exact sum of the input. The step's result must have the
// bits of the CPU model of its order (order.hpp), which is what "the same bits on any GPU" means.
#include <cmath>
#include <cstring>
#include <string>

#include "bits.hpp"
#include "cub_gpu_to_gpu.hpp"
#include "exact_sum.hpp"
#include "harness.cuh"
#include "reproducible.cuh"

namespace step10 {
extern const reduce::Step kStep;
}
namespace step11 {
extern const reduce::Step kStep;
}

namespace {

// |x - exact| and that over |exact| (0 when both are 0, inf when only the exact sum is 0).
void add_errors(reduce::Report& r, const std::string& name, float x, const repro::ExactSum& exact) {
  const double abs_error = exact.error_of(x), e = std::fabs(exact.to_double());
  const double rel = abs_error == 0 ? 0.0 : (e > 0 ? abs_error / e : INFINITY);
  r.extra.push_back(reduce::number_field(name + "_abs_error", abs_error));
  r.extra.push_back(reduce::number_field(name + "_rel_error", rel));
}

bool same_bits(float a, float b) { return std::isnan(a) ? std::isnan(b) : std::memcmp(&a, &b, sizeof a) == 0; }

void measure(const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
  const std::int64_t n = opt.n;
  const std::int64_t grid = opt.extra.at("--grid").empty() ? 0 : std::stoll(opt.extra.at("--grid"));
  const reduce::LaunchConfig cfg{opt.block, device.ordinal, device.sm_count, grid};
  const reduce::LaunchConfig cfg10{step10::kStep.block.size, device.ordinal, device.sm_count};
  const reduce::LaunchConfig cfg11{reduce::kDefaultBlock, device.ordinal, device.sm_count};
  const std::size_t bytes15 = repro::scratch_bytes(n, cfg), bytes10 = step10::kStep.scratch_bytes(n, cfg10),
                    bytes11 = step11::kStep.scratch_bytes(n, cfg11);
  const int runs = opt.warmup + opt.iters;
  reduce::ensure_device_memory(n * sizeof(float) + bytes15 + bytes10 + bytes11 + 4 * runs * sizeof(float) +
                               2 * device.l2_bytes + (64 << 20));

  reduce::Testbed<float> bed(opt, device);
  const reduce::Reference ref = reduce::reference_sum(bed.host.get(), n);
  const repro::ExactSum exact = repro::exact_sum(bed.host.get(), n);
  const float model = repro::model_sum(bed.host.get(), n);
  const auto s15 = bed.scratch(bytes15), s10 = bed.scratch(bytes10), s11 = bed.scratch(bytes11);
  const auto mine = bed.time<float>(1, [&](float* out, int k) {
    return repro::launch(bed.in.get(), n, out, reduce::view(s15), bed.config(cfg, k), bed.stream.get());
  });
  const auto ten = bed.time<float>(1, [&](float* out, int) {
    return step10::kStep.launch(bed.in.get(), n, out, reduce::view(s10), cfg10, bed.stream.get());
  });
  const auto cub = bed.time<float>(1, [&](float* out, int) {
    return step11::kStep.launch(bed.in.get(), n, out, reduce::view(s11), cfg11, bed.stream.get());
  });
  reduce::Runs<float> g2g;
  if (repro_cub::available())
    g2g = bed.time<float>(1, [&](float* out, int) { return repro_cub::sum(bed.in.get(), n, out, bed.stream.get()); });

  reduce::Report r = reduce::fill_common(emit, opt, device);
  float cpu_result = 0.0f;
  r.cpu_ms = reduce::time_cpu_sum(bed.host.get(), n, opt.cpu_runs, &cpu_result);
  reduce::fill_timing(r, mine, bed.shape);
  // Every run must be within the suite's tolerance and have the model's bits.
  const float shown = *mine.run(reduce::check_runs(r, [&](int k) {
    const float x = *mine.run(k);
    reduce::Verdict v(x, ref, n, opt.pattern);
    v.passed = (v.passed || (std::isnan(x) && std::isnan(model)) || (std::isinf(x) && x == model)) && same_bits(x, model);
    v.note = "bits " + repro::bits_text(x) + ", the order's CPU model gives " + repro::bits_text(model);
    return v;
  }));
  reduce::finish(r, bed.input_unchanged());

  r.extra = {reduce::text_field("result_bits", repro::bits_text(shown)),
             reduce::text_field("model_bits", repro::bits_text(model)),
             reduce::number_field("tile_elements", static_cast<double>(repro::tile_elements(n))),
             reduce::number_field("tiles", static_cast<double>(repro::num_tiles(n))),
             reduce::text_field("exact_sum", reduce::exact_text(exact.to_double()))};
  add_errors(r, "step", shown, exact);
  add_errors(r, "step10", *ten.run(runs - 1), exact);
  add_errors(r, "cub", *cub.run(runs - 1), exact);
  r.extra.push_back(reduce::text_field("step10_bits", repro::bits_text(*ten.run(runs - 1))));
  r.extra.push_back(reduce::text_field("cub_bits", repro::bits_text(*cub.run(runs - 1))));
  reduce::add_comparison(r, "step10", ten.summary);
  reduce::add_comparison(r, "cub", cub.summary);
  if (repro_cub::available()) {
    add_errors(r, "cub_g2g", *g2g.run(runs - 1), exact);
    r.extra.push_back(reduce::text_field("cub_g2g_bits", repro::bits_text(*g2g.run(runs - 1))));
    r.extra.push_back(reduce::text_field("cub_g2g_cccl", repro_cub::cccl_version()));
    reduce::add_comparison(r, "cub_g2g", g2g.summary);
  } else {
    r.extra.push_back(reduce::text_field("cub_g2g", repro_cub::why_absent()));
  }

  emit(r);
}

reduce::Bench make_bench() {
  reduce::Bench b{"14_reproducible", repro::kStep.lesson};
  b.spec.summary = "Sums n floats on the GPU with the same bits whatever the grid, the block size and the GPU";
  reduce::ExtraOption grid{"--grid", {}, "blocks (default: one per tile up to SMs x resident blocks per SM, past that the\n"
                           "                   tiles spread evenly over the fewest rounds): imitates another GPU; the\n"
                           "                   result's bits must not change", "N"};
  grid.check = reduce::integer_in(1, 0x7fffffff);
  b.spec.extra = {grid};
  for (reduce::Pattern p : {reduce::Pattern::nan, reduce::Pattern::inf}) b.spec.patterns.push_back(p);
  b.spec.block = repro::kStep.block;
  b.spec.notes =
      "The result must have the bits of the CPU model of the step's order (order.hpp). The same run times step 10,\n"
      "CUB's DeviceReduce::Sum (toolkit CCCL) and, when built with a CCCL 3.5 (-DCCCL_DIR), CUB's gpu_to_gpu sum;\n"
      "the record gives each as <name>_gbps and vs_<name>, and each one's error against the exact sum\n"
      "(<name>_abs_error, <name>_rel_error).";
  b.measure = measure;
  return b;
}

}  // namespace

int main(int argc, char** argv) { return reduce::run_bench(make_bench(), argc, argv); }
