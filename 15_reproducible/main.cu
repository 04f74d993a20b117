// 15_reproducible's record for the harness (reduce::Bench): one run of the step, and in the same run
// step 10, CUB's DeviceReduce::Sum (the toolkit's) and, where built, CUB's gpu_to_gpu sum, each timed
// the same way and each compared with the exact sum of the input. The step's result must have the
// bits of the CPU model of its order (order.hpp), which is what "the same bits on any GPU" means.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "bits.hpp"
#include "cub_gpu_to_gpu.hpp"
#include "exact_sum.hpp"
#include "harness.cuh"
#include "input.hpp"
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
  const char* const name = "15_reproducible";
  const std::int64_t n = opt.n;
  const std::int64_t grid = opt.extra.at("--grid").empty() ? 0 : std::stoll(opt.extra.at("--grid"));
  const reduce::LaunchConfig cfg{opt.block, device.ordinal, device.sm_count, grid};
  const reduce::LaunchConfig cfg10{step10::kStep.default_block, device.ordinal, device.sm_count};
  const reduce::LaunchConfig cfg11{reduce::kDefaultBlock, device.ordinal, device.sm_count};
  const std::size_t bytes15 = repro::scratch_bytes(n, cfg), bytes10 = step10::kStep.scratch_bytes(n, cfg10),
                    bytes11 = step11::kStep.scratch_bytes(n, cfg11);
  const int runs = opt.warmup + opt.iters;
  reduce::ensure_device_memory(n * sizeof(float) + bytes15 + bytes10 + bytes11 + 4 * runs * sizeof(float) +
                               2 * device.l2_bytes + (64 << 20));

  std::unique_ptr<float[]> host(new float[std::max<std::int64_t>(n, 1)]);
  reduce::fill_input(host.get(), n, opt.pattern, opt.seed);
  const reduce::Reference ref = reduce::reference_sum(host.get(), n);
  const repro::ExactSum exact = repro::exact_sum(host.get(), n);
  const float model = repro::model_sum(host.get(), n);
  float cpu_result = 0.0f;
  const double cpu_ms = opt.cpu_runs > 0 ? reduce::time_cpu_sum(host.get(), n, opt.cpu_runs, &cpu_result) : 0.0;

  reduce::Stream stream;
  reduce::DeviceBuffer<float> in(n);
  reduce::DeviceBuffer<unsigned char> s15(bytes15), s10(bytes10), s11(bytes11);
  reduce::L2Flusher flusher(device);
  CUDA_CHECK(cudaMemcpyAsync(in.get(), host.get(), in.bytes(), cudaMemcpyHostToDevice, stream.get()));
  for (auto* s : {&s15, &s10, &s11}) CUDA_CHECK(cudaMemsetAsync(s->get(), 0, s->bytes(), stream.get()));
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  reduce::LaunchShape shape;
  reduce::LaunchConfig first_cfg = cfg;
  first_cfg.shape = &shape;
  const auto mine = reduce::run_slots<float>(opt.warmup, opt.iters, 1, flusher, stream.get(), [&](float* out, int k) {
    return repro::launch(in.get(), n, out, {s15.get(), s15.bytes()}, k == 0 ? first_cfg : cfg, stream.get());
  });
  const auto ten = reduce::run_slots<float>(opt.warmup, opt.iters, 1, flusher, stream.get(), [&](float* out, int) {
    return step10::kStep.launch(in.get(), n, out, {s10.get(), s10.bytes()}, cfg10, stream.get());
  });
  const auto cub = reduce::run_slots<float>(opt.warmup, opt.iters, 1, flusher, stream.get(), [&](float* out, int) {
    return step11::kStep.launch(in.get(), n, out, {s11.get(), s11.bytes()}, cfg11, stream.get());
  });
  reduce::Runs<float> g2g;
  if (repro_cub::available())
    g2g = reduce::run_slots<float>(opt.warmup, opt.iters, 1, flusher, stream.get(),
                                   [&](float* out, int) { return repro_cub::sum(in.get(), n, out, stream.get()); });

  reduce::Report r;
  r.step = name;
  r.lesson = repro::kStep.lesson;
  r.device = device;
  r.n = n;
  r.pattern = opt.pattern;
  r.seed = opt.seed;
  r.block = shape.block;
  r.grid = shape.grid;
  r.launches = shape.launches;
  r.iters = opt.iters;
  r.warmup = opt.warmup;
  r.ms = mine.summary;
  r.cpu_ms = cpu_ms;
  r.deterministic = true;
  r.runs_total = runs;
  r.runs_identical = mine.identical;
  r.fits_in_l2 = n * static_cast<std::int64_t>(sizeof(float)) <= device.l2_bytes;
  // Every run must be within the suite's tolerance and have the model's bits.
  int first_wrong = -1;
  for (int k = 0; k < runs; ++k) {
    const float x = *mine.run(k);
    const bool ok = reduce::check_result(x, ref, n, opt.pattern).passed || (std::isnan(x) && std::isnan(model)) ||
                    (std::isinf(x) && x == model);
    r.runs_correct += ok && same_bits(x, model);
    if (!(ok && same_bits(x, model)) && first_wrong < 0) first_wrong = k;
  }
  const float shown = *mine.run(first_wrong >= 0 ? first_wrong : runs - 1);
  const reduce::Check c = reduce::check_result(shown, ref, n, opt.pattern);
  r.result = shown;
  r.reference = ref.sum;
  r.abs_error = c.abs_error;
  r.tolerance = c.tolerance;
  r.exact_check = c.exact;
  r.input_unchanged = reduce::device_equals_host(in.get(), host.get(), n);
  r.passed = r.runs_correct == runs && r.input_unchanged && r.runs_identical;
  reduce::derive_rates(r);

  r.extra = {reduce::text_field("result_bits", repro::bits_text(shown)),
             reduce::text_field("model_bits", repro::bits_text(model)),
             reduce::number_field("tile_elements", static_cast<double>(repro::tile_elements(n))),
             reduce::number_field("tiles", static_cast<double>(repro::num_tiles(n))),
             reduce::text_field("exact_sum", [&] {
               char t[40];
               std::snprintf(t, sizeof t, "%.17g", exact.to_double());
               return std::string(t);
             }())};
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

  if (first_wrong >= 0)
    std::fprintf(stderr, "%s: run %d of %d gave %s (%.9g); the order's CPU model gives %s (%.9g), reference %.17g\n", name,
                 first_wrong + 1, runs, repro::bits_text(*mine.run(first_wrong)).c_str(), *mine.run(first_wrong),
                 repro::bits_text(model).c_str(), model, ref.sum);
  if (!r.input_unchanged) std::fprintf(stderr, "%s: the step modified its input\n", name);
  if (!r.runs_identical) std::fprintf(stderr, "%s: repeated runs gave different bits\n", name);
  emit(r);
}

std::string check_grid(const std::string& v) {
  char* end = nullptr;
  const long long g = std::strtoll(v.c_str(), &end, 10);
  return (!v.empty() && !*end && g >= 1 && g <= 0x7fffffff) ? "" : "a block count from 1 to 2147483647";
}

reduce::Bench make_bench() {
  reduce::Bench b{"15_reproducible", repro::kStep.lesson};
  b.spec.summary = "Sums n floats on the GPU with the same bits whatever the grid, the block size and the GPU";
  reduce::ExtraOption grid;
  grid.name = "--grid";
  grid.metavar = "N";
  grid.help = "blocks (default: SMs x resident blocks per SM, at most one per tile): imitates another GPU;\n"
              "                   the result's bits must not change";
  grid.check = check_grid;
  b.spec.extra = {grid};
  for (reduce::Pattern p : {reduce::Pattern::nan, reduce::Pattern::inf}) b.spec.patterns.push_back(p);
  b.spec.default_block = repro::kStep.default_block;
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
