// Built instead of cub35.cu when configure found no CCCL 3.5 or newer: the comparison says why not.
#include "cub35.hpp"

namespace step13::cub35 {

bool available() { return false; }
const char* why_absent() { return NEWEST_CUB_ABSENT; }
const char* cccl_version() { return ""; }
std::size_t scratch_bytes(std::int64_t, std::int64_t) { return 0; }
cudaError_t sum(const float*, const std::int64_t*, std::int64_t, float*, void*, std::size_t, cudaStream_t) {
  return cudaErrorNotSupported;
}
cudaError_t sum_fixed(const float*, std::int64_t, std::int64_t, float*, void*, std::size_t, cudaStream_t) {
  return cudaErrorNotSupported;
}

}  // namespace step13::cub35
