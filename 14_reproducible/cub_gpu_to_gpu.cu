// The one translation unit that sees the newer CCCL (cmake/NewestCccl.cmake gives only this file its
// include path): two CUB versions must never meet in one file.
#include <cub/device/device_reduce.cuh>
#include <cuda/std/execution>
#include <cuda/stream_ref>

#include "cmake/newest_cub.hpp"
#include "cub_gpu_to_gpu.hpp"

namespace step14::cub_g2g {

bool available() { return true; }
const char* why_absent() { return ""; }
const char* cccl_version() { return reduce::newest_cccl_version(); }

cudaError_t sum(const float* in, std::int64_t n, float* out, cudaStream_t stream) {
  const auto env = cuda::std::execution::env{cuda::execution::require(cuda::execution::determinism::gpu_to_gpu),
                                             cuda::stream_ref{stream}};
  return cub::DeviceReduce::Sum(in, out, n, env);
}

}  // namespace step14::cub_g2g
