// The suite's two error-check macros.
//
//   CUDA_CHECK(call)  harness code: on failure, throws reduce::CudaError whose message names the call,
//                     the file, the line and CUDA's error string. The harness turns it into exit code 1
//                     (or 77 when the GPU cannot run this build at all).
//   CUDA_TRY(call)    inside a step's launcher, which returns cudaError_t: on failure, return the error
//                     to the caller. Launchers never print and never throw; the caller decides.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace reduce {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

[[noreturn]] inline void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  throw CudaError(code, std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                            cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")");
}

}  // namespace reduce

#define CUDA_CHECK(call)                                                                                              \
  do {                                                                                                                \
    const cudaError_t cuda_check_status_ = (call);                                                                    \
    if (cuda_check_status_ != cudaSuccess) ::reduce::throw_cuda_error(cuda_check_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define CUDA_TRY(call)                                            \
  do {                                                            \
    const cudaError_t cuda_try_status_ = (call);                  \
    if (cuda_try_status_ != cudaSuccess) return cuda_try_status_; \
  } while (0)
