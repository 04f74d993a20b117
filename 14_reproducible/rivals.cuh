// The rivals of a float sum that 14 and 15 time beside their own kernel (the engine's Rival, harness.cuh):
// step 10, the toolkit's CUB (step 11), step 14, and CUB's gpu_to_gpu sum (14_reproducible_cub, a stub
// that says why where no CCCL 3.5 was given). A step that includes this file uses 10, 11 and 14
// (beyond.txt), which links their libraries.
#pragma once

#include <cstdint>

#include "cub_gpu_to_gpu.hpp"
#include "harness.cuh"
#include "steps.hpp"  // the steps' records: generated from steps.txt and beyond.txt

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
inline Rival<float> step14(const DeviceInfo& device) { return of_step("step14", ::step14::kStep, device); }

// CUB 3.5's run-to-run and GPU-to-GPU reproducible sum (DeviceReduce::Sum with gpu_to_gpu determinism),
// which takes its scratch from the stream's pool; absent, with the reason, where the build has none.
inline Rival<float> cub_g2g() {
  Rival<float> r{"cub_g2g", {}, [](const float* in, std::int64_t n, float* out, Scratch, cudaStream_t stream) {
                   return ::step14::cub_g2g::sum(in, n, out, stream);
                 }};
  if (::step14::cub_g2g::available())
    r.fields = {text_field("cub_g2g_cccl", ::step14::cub_g2g::cccl_version())};
  else
    r.absent = ::step14::cub_g2g::why_absent();
  return r;
}

}  // namespace reduce::rivals
