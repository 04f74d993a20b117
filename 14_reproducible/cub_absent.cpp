// The comparison with CUB's gpu_to_gpu sum when CMake found no CCCL that has it: the reason, and a
// launcher that says "not supported".
#include "cub_gpu_to_gpu.hpp"

#ifndef NEWEST_CUB_ABSENT
#define NEWEST_CUB_ABSENT "no CCCL 3.5 or newer was given to CMake"
#endif

namespace step14::cub_g2g {

bool available() { return false; }
const char* why_absent() { return NEWEST_CUB_ABSENT; }
const char* cccl_version() { return ""; }
cudaError_t sum(const float*, std::int64_t, float*, cudaStream_t) { return cudaErrorNotSupported; }

}  // namespace step14::cub_g2g
