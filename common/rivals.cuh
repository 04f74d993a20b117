// The suite's rivals of a float sum, declared once (the engine's Rival, harness.cuh): the steps beyond
// name them here and the engine times, checks and records them. A step that names one links the library
// that holds it (CMake LIBS): step10 10_loads_in_flight_kernel, cub 11_cub_kernel, step14
// 14_reproducible_kernel, cub_g2g 14_reproducible_cub (a stub that says why where no CCCL 3.5 was given).
#pragma once

#include <cstdint>

#include "harness.cuh"

// The libraries' symbols, as each step's own header declares them.
namespace step10 {
extern const reduce::Step kStep;
}
namespace step11 {
extern const reduce::Step kStep;
}
namespace repro {
extern const reduce::Step kStep;
}
namespace repro_cub {  // 14_reproducible/cub_gpu_to_gpu.hpp
bool available();
const char* why_absent();
const char* cccl_version();
cudaError_t sum(const float* in, std::int64_t n, float* out, cudaStream_t stream);
}  // namespace repro_cub

namespace reduce::rivals {

// A step of the suite's shape as a rival named `name`, launched as its own executable would be: its
// default block where it takes --block, its fixed one where not.
inline Rival<float> of_step(const char* name, const Step& step, const DeviceInfo& device) {
  const LaunchConfig cfg{step.block.size > 0 ? step.block.size : kDefaultBlock, device.ordinal, device.sm_count};
  return {name, [&step, cfg](std::int64_t n) { return step.scratch_bytes(n, cfg); },
          [&step, cfg](const float* in, std::int64_t n, float* out, Scratch s, cudaStream_t stream) {
            return step.launch(in, n, out, s, cfg, stream);
          }};
}

inline Rival<float> step10(const DeviceInfo& device) { return of_step("step10", ::step10::kStep, device); }
// The toolkit's CUB: cub::DeviceReduce::Sum (step 11).
inline Rival<float> cub(const DeviceInfo& device) { return of_step("cub", ::step11::kStep, device); }
inline Rival<float> step14(const DeviceInfo& device) { return of_step("step14", ::repro::kStep, device); }

// CUB 3.5's run-to-run and GPU-to-GPU reproducible sum (DeviceReduce::Sum with gpu_to_gpu determinism),
// which takes its scratch from the stream's pool; absent, with the reason, where the build has none.
inline Rival<float> cub_g2g() {
  Rival<float> r{"cub_g2g", {}, [](const float* in, std::int64_t n, float* out, Scratch, cudaStream_t stream) {
                   return repro_cub::sum(in, n, out, stream);
                 }};
  if (repro_cub::available()) r.fields = {text_field("cub_g2g_cccl", repro_cub::cccl_version())};
  else r.absent = repro_cub::why_absent();
  return r;
}

}  // namespace reduce::rivals
