// The newest CUB's segmented sums (CCCL 3.5 or newer, given at configure time with -DCCCL_DIR): the
// offsets overload and the fixed-size one, DeviceSegmentedReduce::Sum(temp, bytes, in, out,
// num_segments, segment_size). cub35.cu is the one file that sees that CCCL; without one,
// cub35_absent.cpp says why (available() is false and why_absent() holds configure's reason).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace step13::cub35 {

bool available();
const char* why_absent();
const char* cccl_version();  // "3.5.0"

// Scratch for either overload (at least 1 byte); 0 when absent.
std::size_t scratch_bytes(std::int64_t segments, std::int64_t segment_size);
// The offsets overload on begin = offsets, end = offsets + 1 (64-bit).
cudaError_t sum(const float* in, const std::int64_t* offsets, std::int64_t segments, float* out, void* scratch,
                std::size_t bytes, cudaStream_t stream);
// The fixed-size overload: segment s is in[s * segment_size, (s + 1) * segment_size) (an int in CUB).
cudaError_t sum_fixed(const float* in, std::int64_t segments, std::int64_t segment_size, float* out, void* scratch,
                      std::size_t bytes, cudaStream_t stream);

}  // namespace step13::cub35
