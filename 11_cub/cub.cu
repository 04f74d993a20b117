// Step 11: the library. What production code calls.
//
// What it shows: cub::DeviceReduce::Sum, from CUB (part of NVIDIA's CCCL, shipped with the CUDA
// Toolkit). It is the reference the benchmark compares every hand-written step with. Its two-phase
// API is the same for every CUB device algorithm: called with a null temporary-storage pointer it
// only reports how many bytes it needs (scratch_bytes below, outside the timed region); called again
// with that storage it enqueues the reduction on the given stream. CUB picks block size, items per
// thread and grid for the GPU it runs on, so --block does not apply. For large inputs it makes two
// launches (one partial sum per block, then one block over those); small inputs take one.
// CUB's reduction does not use atomics: on the same GPU and input the result is the same every run,
// which the tests check.
// Build it alone, from the repository root (CMake builds every step at once: README.md):
// nvcc -O3 -arch=native -Icommon -DSTEP_NO=11 -o 11 11_cub/cub.cu common/*.cu common/*.cpp
// Usage: ./11_cub [--n 2^26] [--pattern int] [--help]
#include <cub/device/device_reduce.cuh>

#include "step.cuh"

namespace step11 {

std::size_t scratch_bytes(std::int64_t n, const reduce::LaunchConfig&) {
  std::size_t bytes = 0;
  // With a null storage pointer CUB only computes `bytes`; no work is enqueued.
  const cudaError_t e =
      cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const float*>(nullptr), static_cast<float*>(nullptr), n);
  // At least one byte: a null pointer in launch() would make CUB answer the size query again and
  // reduce nothing. An error here shows again, and is reported, at launch.
  return e == cudaSuccess ? std::max<std::size_t>(bytes, 1) : 1;
}

cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch, const reduce::LaunchConfig&,
                   cudaStream_t stream) {
  std::size_t bytes = scratch.bytes;
  return cub::DeviceReduce::Sum(scratch.data, bytes, in, out, n, stream);
}

extern const reduce::Step kStep = {
    "11_cub",
    "library: cub::DeviceReduce::Sum",
    /*deterministic=*/true,
    reduce::BlockRule::inside("CUB chooses its launch shape for the GPU it runs on"),
    scratch_bytes,
    launch,
};

}  // namespace step11
