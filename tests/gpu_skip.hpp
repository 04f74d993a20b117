// GPU tests skip, with the reason, where no CUDA device is present: SKIP_WITHOUT_GPU() at the top of
// each test. Shared by tests/test_steps.cu and the steps beyond the progression (<step>/tests/).
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace reduce::testing {

// Why GPU tests cannot run here, or nothing when they can. Opens device 0 on first use.
inline const std::optional<std::string>& no_gpu_reason() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) return std::string("no usable CUDA device: ") + cudaGetErrorString(e);
    if (count == 0) return std::string("no CUDA device present");
    if (cudaSetDevice(0) != cudaSuccess) return std::string("cannot open CUDA device 0");
    return std::nullopt;
  }();
  return reason;
}

}  // namespace reduce::testing

#define SKIP_WITHOUT_GPU() \
  if (const auto& why = ::reduce::testing::no_gpu_reason()) GTEST_SKIP() << *why
