// 15_exact's record for the harness (reduce::Bench): the step, and in the same run step 10, 14_reproducible,
// the toolkit's CUB and, where built, CUB's gpu_to_gpu sum. Every run: the exact sum's bits (common/exact_sum.hpp).
// --write-cases FILE also writes the fsum table's cases with this GPU's results (check_fsum.py checks them).
#include <cmath>
#include <string>
#include <vector>

#include "14_reproducible/bits.hpp"
#include "14_reproducible/rivals.cuh"
#include "cases.hpp"
#include "exact.cuh"
#include "exact_sum.hpp"
#include "files.hpp"  // FileWriter
#include "harness.cuh"

namespace {

std::int64_t grid = 0;   // --grid: 0, the step's own
std::string cases_file;  // --write-cases: "", none
using Fields = std::vector<reduce::Field>;

void measure(const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
  const reduce::LaunchConfig cfg{opt.block, device.ordinal, device.sm_count, grid};
  reduce::Testbed<float> bed(opt, device, step15::scratch_bytes(opt.n, cfg));
  const bool cases_ok = cases_file.empty() || step15::write_cases(cases_file, cfg);
  const float want = reduce::exact_sum(bed.host.get(), opt.n).to_float();
  const reduce::Reference ref = reduce::reference_sum(bed.host.get(), opt.n);  // the rivals' check
  const auto bits = [](const char* name, float x) { return reduce::text_field(name, step14::bits_text(x)); };
  reduce::Measurement<float> m;
  m.launch = [&](float* out, reduce::Scratch s, cudaStream_t st) {
    return step15::launch(bed.in.get(), opt.n, out, s, cfg, st);
  };
  m.verdict = [&](const float* x) {  // every run: the exact sum's bits
    reduce::Verdict v(reduce::Check{true, 0.0, std::fabs(double(*x) - want), step14::same_bits(*x, want)}, *x, want);
    v.note = "bits " + step14::bits_text(*x) + ", the exact sum rounded once is " + step14::bits_text(want);
    return v;
  };
  m.fields = [&](const float* x) { return Fields{bits("result_bits", *x), bits("exact_bits", want)}; };
  // The rivals (14_reproducible/rivals.cuh; cub_g2g absent without a CCCL 3.5), within the suite's tolerance.
  m.rivals = {reduce::rivals::step10(device), reduce::rivals::step14(device), reduce::rivals::cub(device),
              reduce::rivals::cub_g2g()};
  m.rival_verdict = [&](const float* x) { return reduce::sum_verdict(*x, ref, opt.n, opt.pattern); };
  m.describe = [&](const float* x) { return Fields{bits("bits", *x)}; };
  reduce::Report r = bed.measure(emit, m).record;
  r.passed = r.passed && cases_ok;
  emit(r);
}

}  // namespace

int main(int argc, char** argv) {
  reduce::Bench b{"15_exact", step15::kStep.lesson};
  b.spec.summary = "Sums n floats exactly on the GPU and rounds once: the bits of Python's math.fsum, on any GPU";
  b.spec.extra = {
      reduce::integer_option("--grid", grid, 1, 1 << 20,
                             "blocks (default: enough to fill the device), at most 2^20: the bits never change"),
      reduce::text_option("--write-cases", cases_file,
                          "also write the fsum table's cases with this GPU's results to FILE (check_fsum.py)", "FILE")};
  b.spec.patterns.insert(b.spec.patterns.end(), {reduce::Pattern::nan, reduce::Pattern::inf, reduce::Pattern::limits});
  b.spec.block = step15::kStep.block;
  b.spec.notes =
      "Every run must give the bits of the exact sum rounded once to nearest even. The same run times "
      "step 10,\n14_reproducible, the toolkit's CUB and, with a CCCL 3.5 (-DCCCL_DIR), CUB's gpu_to_gpu "
      "sum:\n<name>_gbps and vs_<name>.";
  b.check = [](const reduce::Options&) {  // a path that cannot be written is refused before any work
    if (!cases_file.empty()) reduce::FileWriter(cases_file, "--write-cases");
  };
  b.measure = measure;
  return reduce::run_bench(b, argc, argv);
}
