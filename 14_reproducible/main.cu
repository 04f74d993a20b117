// 14_reproducible's record for the harness (reduce::Bench): one run of the step, and in the same run
// step 10, CUB's DeviceReduce::Sum (the toolkit's) and, where built, CUB's gpu_to_gpu sum, each timed
// the same way and each compared with the exact sum of the input. The step's result must have the
// bits of the CPU model of its order (order.hpp), which is what "the same bits on any GPU" means.
#include <cmath>
#include <vector>

#include "bits.hpp"
#include "exact_sum.hpp"
#include "harness.cuh"
#include "reproducible.cuh"
#include "rivals.cuh"

namespace {

std::int64_t grid = 0;  // --grid: 0, the step's own

void measure(const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
  const reduce::LaunchConfig cfg{opt.block, device.ordinal, device.sm_count, grid};
  reduce::Testbed<float> bed(opt, device, step14::scratch_bytes(opt.n, cfg));
  const reduce::Reference ref = reduce::reference_sum(bed.host.get(), opt.n);
  const reduce::ExactSum exact = reduce::exact_sum(bed.host.get(), opt.n);
  const float model = step14::model_sum(bed.host.get(), opt.n);
  const auto bits = [](const float* x) { return step14::bits_text(*x); };
  reduce::Measurement<float> m;
  m.launch = [&](float* out, reduce::Scratch s, cudaStream_t st) {
    return step14::launch(bed.in.get(), opt.n, out, s, cfg, st);
  };
  m.verdict = [&](const float* x) {  // within the suite's tolerance, and the bits of the order's CPU model
    reduce::Verdict v(*x, ref, opt.n, opt.pattern);
    v.passed = (v.passed || std::isnan(*x) || (std::isinf(*x) && *x == model)) && step14::same_bits(*x, model);
    v.note = "bits " + bits(x) + ", the order's CPU model gives " + step14::bits_text(model);
    return v;
  };
  float sink = 0.0f;  // the CPU yardstick: the one-core sum only
  m.before = [&](reduce::Report& r) { r.cpu_ms = reduce::time_cpu_sum(bed.host.get(), opt.n, opt.cpu_runs, &sink); };
  m.fields = [&](const float* x) {
    std::vector<reduce::Field> f = {reduce::text_field("result_bits", bits(x)),
                                    reduce::text_field("model_bits", bits(&model)),
                                    reduce::number_field("tile_elements", double(step14::tile_elements(opt.n))),
                                    reduce::number_field("tiles", double(step14::num_tiles(opt.n))),
                                    reduce::text_field("exact_sum", reduce::exact_text(exact.to_double()))};
    return reduce::error_fields(exact, *x, std::move(f), "step_");
  };
  // The rivals: within the suite's tolerance (NaN and inf matched as they are); each one's error and bits.
  m.rivals = {reduce::rivals::step10(device), reduce::rivals::cub(device), reduce::rivals::cub_g2g()};
  m.rival_verdict = [&](const float* x) { return reduce::sum_verdict(*x, ref, opt.n, opt.pattern); };
  m.describe = [&](const float* x) { return reduce::error_fields(exact, *x, {reduce::text_field("bits", bits(x))}); };
  emit(bed.measure(emit, m).record);
}

}  // namespace

int main(int argc, char** argv) {
  reduce::Bench b{"14_reproducible", step14::kStep.lesson};
  b.spec.summary = "Sums n floats on the GPU with the same bits whatever the grid, the block size and the GPU";
  b.spec.extra = {reduce::integer_option(
      "--grid", grid, 1, 0x7fffffff,
      "blocks (default: one per tile up to SMs x resident blocks per SM, past that the\n"
      "                   tiles spread evenly over the fewest rounds): imitates another GPU; the\n"
      "                   result's bits must not change")};
  b.spec.patterns.insert(b.spec.patterns.end(), {reduce::Pattern::nan, reduce::Pattern::inf});
  b.spec.block = step14::kStep.block;
  b.spec.notes =
      "The result must have the bits of the CPU model of the step's order (order.hpp). The same run times step 10,\n"
      "CUB's DeviceReduce::Sum (toolkit CCCL) and, when built with a CCCL 3.5 (-DCCCL_DIR), CUB's gpu_to_gpu sum:\n"
      "<name>_gbps, vs_<name>, <name>_abs_error, <name>_rel_error, its bits and <name>_passed.";
  b.measure = measure;
  return reduce::run_bench(b, argc, argv);
}
