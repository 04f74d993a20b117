// 15_exact's record for the harness (reduce::Bench): the step, and in the same run step 10, 14_reproducible,
// the toolkit's CUB and, where built, CUB's gpu_to_gpu sum. Every run must give the exact sum's bits (common/exact_sum.hpp).
// --write-cases FILE also writes the fsum table's cases with this GPU's results (check_fsum.py checks them).
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "14_reproducible/bits.hpp"
#include "14_reproducible/reproducible.cuh"
#include "14_reproducible/rivals.cuh"
#include "cases.hpp"
#include "exact.cuh"
#include "exact_sum.hpp"
#include "files.hpp"
#include "harness.cuh"

namespace {

bool same_bits(float a, float b) { return std::isnan(a) ? std::isnan(b) : std::memcmp(&a, &b, sizeof a) == 0; }

// The fsum cases on this GPU, each against the CPU's exact sum; false when one differs (told on stderr).
bool write_cases(const std::string& path, const reduce::LaunchConfig& cfg) {
  reduce::FileWriter file(path, "--write-cases");
  const std::vector<step15::Case> cases = step15::fsum_cases();
  std::vector<float> results(cases.size());
  reduce::DeviceBuffer<unsigned char> scratch(step15::scratch_bytes(0, cfg));
  reduce::DeviceBuffer<float> out(1);
  CUDA_CHECK(cudaMemset(scratch.get(), 0, scratch.bytes()));  // zero once: every launch leaves it zero
  bool ok = true;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const std::vector<float>& x = cases[k].x;
    const std::int64_t n = static_cast<std::int64_t>(x.size());
    reduce::DeviceBuffer<float> in(n);
    CUDA_CHECK(cudaMemcpy(in.get(), x.data(), in.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(step15::launch(in.get(), n, out.get(), reduce::view(scratch), cfg, nullptr));
    CUDA_CHECK(cudaMemcpy(&results[k], out.get(), sizeof(float), cudaMemcpyDeviceToHost));
    const float want = reduce::exact_sum(x.data(), n).to_float();
    if (same_bits(results[k], want)) continue;
    std::fprintf(stderr, "case %s: bits %s, the exact sum's %s\n", cases[k].name.c_str(), step14::bits_text(results[k]).c_str(), step14::bits_text(want).c_str());
    ok = false;
  }
  file.commit(step15::cases_text(cases, results));
  return ok;
}

void measure(const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
  const std::int64_t n = opt.n;
  const std::int64_t grid = opt.extra.at("--grid").empty() ? 0 : std::stoll(opt.extra.at("--grid"));
  const reduce::LaunchConfig cfg{opt.block, device.ordinal, device.sm_count, grid};
  reduce::Testbed<float> bed(opt, device, step15::scratch_bytes(n, cfg));
  const bool cases_ok = opt.extra.at("--write-cases").empty() || write_cases(opt.extra.at("--write-cases"), cfg);
  const float want = reduce::exact_sum(bed.host.get(), n).to_float();
  const reduce::Reference ref = reduce::reference_sum(bed.host.get(), n);  // the rivals' check
  const auto s15 = bed.scratch(step15::scratch_bytes(n, cfg));
  const auto mine = bed.time<float>(1, [&](float* out, int k) {
    return step15::launch(bed.in.get(), n, out, reduce::view(s15), cfg, bed.stream.get());
  });
  // The rivals (14_reproducible/rivals.cuh): step 10, step 14, the toolkit's CUB and CUB's gpu_to_gpu (absent
  // without a CCCL 3.5).
  const auto rivals = {bed.rival(reduce::rivals::step10(device)), bed.rival(reduce::rivals::step14(device)),
                       bed.rival(reduce::rivals::cub(device)), bed.rival(reduce::rivals::cub_g2g())};

  reduce::Report r = reduce::fill_common(emit, opt, device);
  reduce::time_cpu_yardsticks(r, bed.host.get(), n, opt.cpu_runs);
  reduce::fill_timing(r, mine);
  const float shown = *mine.run(reduce::check_runs(r, [&](int k) {  // every run: the exact sum's bits
    const float x = *mine.run(k);
    reduce::Verdict v(reduce::Check{true, 0.0, std::fabs(static_cast<double>(x) - want), same_bits(x, want)}, x, want);
    v.note = "bits " + step14::bits_text(x) + ", the exact sum rounded once is " + step14::bits_text(want);
    return v;
  }));
  reduce::finish(r, bed.input_unchanged());
  if (!cases_ok) r.passed = false;

  r.extra = {reduce::text_field("result_bits", step14::bits_text(shown)), reduce::text_field("exact_bits", step14::bits_text(want))};
  for (const auto& rival : rivals)  // <name>_bits, the timing, vs_<name>, <name>_passed (within the suite's tolerance)
    reduce::add_rival(r, rival, [&](const float* x) { return reduce::sum_verdict(*x, ref, n, opt.pattern); },
                      [](const float* x) { return std::vector<reduce::Field>{reduce::text_field("bits", step14::bits_text(*x))}; });
  emit(r);
}

reduce::Bench make_bench() {
  reduce::Bench b{"15_exact", step15::kStep.lesson};
  b.spec.summary = "Sums n floats exactly on the GPU and rounds once: the bits of Python's math.fsum, on any GPU";
  reduce::ExtraOption grid{"--grid", {}, "blocks (default: enough to fill the device), at most 2^20: the bits never change", "N"};
  grid.check = reduce::integer_in(1, 1 << 20);
  reduce::ExtraOption cases{"--write-cases", {}, "also write the fsum table's cases with this GPU's results to FILE\n"
                            "                   (check them: python3 15_exact/check_fsum.py FILE)", "FILE"};
  b.spec.extra = {grid, cases};
  for (reduce::Pattern p : {reduce::Pattern::nan, reduce::Pattern::inf, reduce::Pattern::limits}) b.spec.patterns.push_back(p);
  b.spec.block = step15::kStep.block;
  b.spec.notes = "Every run must give the bits of the exact sum rounded once to nearest even. The same run times step 10,\n"
                 "14_reproducible, the toolkit's CUB and, with a CCCL 3.5 (-DCCCL_DIR), CUB's gpu_to_gpu sum:\n"
                 "<name>_gbps and vs_<name>.";
  b.check = [](const reduce::Options& opt) {  // a path that cannot be written is refused before any work
    if (!opt.extra.at("--write-cases").empty()) reduce::FileWriter(opt.extra.at("--write-cases"), "--write-cases");
  };
  b.measure = measure;
  return b;
}

}  // namespace

int main(int argc, char** argv) { return reduce::run_bench(make_bench(), argc, argv); }
