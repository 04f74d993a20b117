// 15_exact --write-cases FILE: the fsum table's cases (cases.hpp) summed by the step on this GPU, each
// checked against the CPU's exact sum and written with its result for check_fsum.py.
#include <cstdio>
#include <string>
#include <vector>

#include "14_reproducible/bits.hpp"
#include "cases.hpp"
#include "device.cuh"
#include "exact.cuh"
#include "exact_sum.hpp"
#include "files.hpp"

namespace step15 {

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
    reduce::DeviceBuffer<float> in(x.size());
    CUDA_CHECK(cudaMemcpy(in.get(), x.data(), in.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(
        step15::launch(in.get(), in.size(), out.get(), reduce::Scratch{scratch.get(), scratch.bytes()}, cfg, nullptr));
    CUDA_CHECK(cudaMemcpy(&results[k], out.get(), sizeof(float), cudaMemcpyDeviceToHost));
    const float want = reduce::exact_sum(x.data(), in.size()).to_float();
    if (step14::same_bits(results[k], want)) continue;
    std::fprintf(stderr, "case %s: bits %s, the exact sum's %s\n", cases[k].name.c_str(),
                 step14::bits_text(results[k]).c_str(), step14::bits_text(want).c_str());
    ok = false;
  }
  file.commit(step15::cases_text(cases, results));
  return ok;
}

}  // namespace step15
