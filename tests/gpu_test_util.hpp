// What every GPU test shares: why it cannot run here, and the skip that says so.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <exception>
#include <optional>
#include <string>

#include "device.cuh"

namespace reduce_test {

// Why GPU tests cannot run here, or nothing when they can. Opens device 0 on first use, through the
// harness's own open_device(), so that a test skips with the words an executable exits 77 with
// ("no usable CUDA device: ..."): one cause, one wording, and scripts/suite skips counts it once.
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

// Why a test that needs `bytes` of free device memory cannot run here (it says how many GiB it needs
// and how many are free), or nothing when they are free.
inline std::optional<std::string> lacks_device_memory(double bytes) {
  std::size_t free_bytes = 0, total_bytes = 0;
  if (const cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes); e != cudaSuccess) {
    ADD_FAILURE() << "cudaMemGetInfo: " << cudaGetErrorString(e);  // a failure, not a reason to skip
    return std::string("cudaMemGetInfo failed");
  }
  if (static_cast<double>(free_bytes) >= bytes) return std::nullopt;
  return "needs " + std::to_string(static_cast<long long>(bytes / (1 << 30)) + 1) + " GiB of free device memory, " +
         std::to_string(free_bytes >> 30) + " free";
}

// Set once a CUDA error has left the context unusable (an illegal address: every later call fails).
inline bool& gpu_context_lost() {
  static bool lost = false;
  return lost;
}

// One case of a GPU property (tests/property.hpp's verify): runs f, which returns "" or why the case
// failed; a CUDA error thrown inside (CUDA_CHECK) fails the case with its message instead of ending the
// test before the seed is printed. After an error that loses the context every case would fail, so the
// property's smaller() should offer no candidates once gpu_context_lost() is set.
template <typename F>
std::string verify_on_gpu(F&& f) {
  if (gpu_context_lost()) return "the CUDA context was lost by an earlier case";
  try {
    return f();
  } catch (const std::exception& e) {
    std::string why = e.what();
    if (cudaDeviceSynchronize() != cudaSuccess) {
      gpu_context_lost() = true;
      why += " (the CUDA context is lost: this case is not shrunk)";
    }
    return why;
  }
}

}  // namespace reduce_test

// Skips the test, with the reason, where no CUDA device is usable; never passes silently.
#define SKIP_WITHOUT_GPU() \
  if (const auto& why = ::reduce_test::no_gpu_reason()) GTEST_SKIP() << *why

// Skips the test, with the reason, unless `bytes` of device memory are free (the n > 2^31 tests).
#define SKIP_WITHOUT_DEVICE_MEMORY(bytes) \
  if (const auto why = ::reduce_test::lacks_device_memory(bytes)) GTEST_SKIP() << *why
