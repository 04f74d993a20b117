// What every GPU test shares: why it cannot run here, and the skip that says so.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <exception>
#include <optional>
#include <string>

#include "device.cuh"

namespace reduce_test {

// Why GPU tests cannot run here, or nothing when they can. Opens device 0 on first use, through the
// harness's own open_device(), so that a test skips with the words an executable exits 77 with
// ("no usable CUDA device: ..."): one cause, one wording, and scripts/skip_reasons counts it once.
inline const std::optional<std::string>& no_gpu_reason() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
    try {
      reduce::open_device(0);
    } catch (const reduce::NoUsableDevice& e) {
      return std::string("no usable CUDA device: ") + e.what();
    } catch (const std::exception& e) {
      return std::string("no usable CUDA device: cannot open device 0: ") + e.what();
    }
    return std::nullopt;
  }();
  return reason;
}

}  // namespace reduce_test

// Skips the test, with the reason, where no CUDA device is usable; never passes silently.
#define SKIP_WITHOUT_GPU() \
  if (const auto& why = ::reduce_test::no_gpu_reason()) GTEST_SKIP() << *why
