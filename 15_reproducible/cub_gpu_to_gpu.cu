// The one translation unit that sees the newer CCCL (15_reproducible/CMakeLists.txt gives only this
// file its include path): two CUB versions must never meet in one file.
#include <cub/device/device_reduce.cuh>
#include <cuda/std/execution>
#include <cuda/stream_ref>

#include <cstdio>

#include "cub_gpu_to_gpu.hpp"

#if CCCL_MAJOR_VERSION < 3 || (CCCL_MAJOR_VERSION == 3 && CCCL_MINOR_VERSION < 5)
#error "cub_gpu_to_gpu.cu needs CCCL 3.5 or newer: the include path reached another CCCL first"
#endif

namespace repro_cub {

bool available() { return true; }
const char* why_absent() { return ""; }
const char* cccl_version() {
  static char text[32];
  std::snprintf(text, sizeof text, "%d.%d.%d", CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION);
  return text;
}

cudaError_t sum(const float* in, std::int64_t n, float* out, cudaStream_t stream) {
  const auto env = cuda::std::execution::env{cuda::execution::require(cuda::execution::determinism::gpu_to_gpu),
                                             cuda::stream_ref{stream}};
  return cub::DeviceReduce::Sum(in, out, n, env);
}

}  // namespace repro_cub
