// CUB's reproducible sum (cub::DeviceReduce::Sum with cuda::execution::determinism::gpu_to_gpu, CCCL 3.1
// and later), for step 14 to compare with. Built only when CMake finds a CCCL 3.5 or newer that the
// user points at (-DCCCL_DIR=... or CMAKE_PREFIX_PATH); the toolkit's CCCL 3.0 lacks it. This header
// includes no CUB, so no other file sees the newer CCCL.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace step14::cub_g2g {

// True when this build has the comparison; otherwise why_absent() says why (one line).
bool available();
const char* why_absent();
const char* cccl_version();  // "3.5.0", or "" when absent

// Sums in[0..n) into *out on stream with gpu_to_gpu determinism. CUB takes its temporary storage from
// the stream-ordered pool (cudaMallocAsync) inside the call. cudaErrorNotSupported when absent.
cudaError_t sum(const float* in, std::int64_t n, float* out, cudaStream_t stream);

}  // namespace step14::cub_g2g
