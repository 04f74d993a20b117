// The one translation unit that sees the newest CCCL (cmake/NewestCccl.cmake gives only this file its
// include path): two CUB versions must never meet in one file.
#include <cub/device/device_segmented_reduce.cuh>

#include <algorithm>
#include <climits>

#include "cmake/newest_cub.hpp"
#include "cub35.hpp"

namespace step13::cub35 {

bool available() { return true; }
const char* why_absent() { return ""; }
const char* cccl_version() { return reduce::newest_cccl_version(); }

std::size_t scratch_bytes(std::int64_t segments, std::int64_t segment_size) {
  std::size_t a = 0, b = 0;
  if (cub::DeviceSegmentedReduce::Sum(nullptr, a, static_cast<const float*>(nullptr), static_cast<float*>(nullptr),
                                      segments, static_cast<const std::int64_t*>(nullptr),
                                      static_cast<const std::int64_t*>(nullptr)) != cudaSuccess)
    a = 0;
  if (segment_size > 0 && segment_size <= INT_MAX &&
      cub::DeviceSegmentedReduce::Sum(nullptr, b, static_cast<const float*>(nullptr), static_cast<float*>(nullptr),
                                      segments, static_cast<int>(segment_size)) != cudaSuccess)
    b = 0;
  return std::max<std::size_t>({a, b, 1});
}

cudaError_t sum(const float* in, const std::int64_t* offsets, std::int64_t segments, float* out, void* scratch,
                std::size_t bytes, cudaStream_t stream) {
  if (segments == 0) return cudaSuccess;
  return cub::DeviceSegmentedReduce::Sum(scratch, bytes, in, out, segments, offsets, offsets + 1, stream);
}

cudaError_t sum_fixed(const float* in, std::int64_t segments, std::int64_t segment_size, float* out, void* scratch,
                      std::size_t bytes, cudaStream_t stream) {
  if (segments == 0) return cudaSuccess;
  if (segment_size <= 0 || segment_size > INT_MAX) return cudaErrorInvalidValue;
  return cub::DeviceSegmentedReduce::Sum(scratch, bytes, in, out, segments, static_cast<int>(segment_size), stream);
}

}  // namespace step13::cub35
