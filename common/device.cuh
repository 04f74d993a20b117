// Device-side pieces of the harness: RAII owners, device discovery, the L2 flush, and a one-shot
// reduction helper the tests use.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda_check.cuh"
#include "report.hpp"
#include "step.cuh"

namespace reduce {

// No CUDA device, a device this build has no code for, or not enough device memory: exit code 77.
class NoUsableDevice : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Owns count elements of device memory (cudaMalloc / cudaFree). Move-only.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) CUDA_CHECK(cudaMalloc(&ptr_, count_ * sizeof(T)));
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    DeviceBuffer(std::move(other)).swap(*this);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);  // a destructor cannot report; a failed free here means a broken context anyway
  }

  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  void swap(DeviceBuffer& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(count_, other.count_);
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// A non-blocking stream (never synchronizes with the legacy default stream).
class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  Event(Event&& other) noexcept : e_(std::exchange(other.e_, nullptr)) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// Makes `ordinal` the current device and describes it. Throws NoUsableDevice when there is no CUDA
// device at all (the reason from the runtime included), UsageError when ordinal is out of range.
DeviceInfo open_device(int ordinal);

// Evicts the L2 cache by reading a buffer twice its size, so the next kernel reads its input from
// DRAM. Reading (not cudaMemset) leaves clean lines behind: a memset would leave the L2 full of dirty
// lines whose write-back would then compete with the timed kernel's reads.
class L2Flusher {
 public:
  explicit L2Flusher(const DeviceInfo& device);
  void flush(cudaStream_t stream);

 private:
  DeviceBuffer<int4> buffer_;
  DeviceBuffer<int> sink_;
  int blocks_ = 0;
};

// Runs step once on device input in[0..n) and returns the result. The output is allocated fresh and
// poisoned with NaN first, so a launcher that writes nothing cannot pass; so is the scratch (zero-
// filled, as step.cuh promises) unless the caller passes its own. For tests; the timed path in
// harness.cu allocates once and reuses.
float reduce_once(const Step& step, const float* in, std::int64_t n, const LaunchConfig& cfg, cudaStream_t stream,
                  Scratch scratch = {});

// True when device[0..n) holds the same bytes as host[0..n): copied back in slices of 2^24 elements,
// so checking a large input costs little host memory. The "input unchanged" check of every executable.
template <typename T>
bool device_equals_host(const T* device, const T* host, std::int64_t n) {
  constexpr std::int64_t kSlice = std::int64_t{1} << 24;
  std::vector<T> slice(static_cast<std::size_t>(n < kSlice ? n : kSlice));
  for (std::int64_t begin = 0; begin < n; begin += kSlice) {
    const std::int64_t count = n - begin < kSlice ? n - begin : kSlice;
    CUDA_CHECK(cudaMemcpy(slice.data(), device + begin, count * sizeof(T), cudaMemcpyDeviceToHost));
    if (std::memcmp(slice.data(), host + begin, count * sizeof(T)) != 0) return false;
  }
  return true;
}

// True when the error means "this build has no code this GPU can run" (exit 77, not a wrong result).
bool is_unsupported_device_error(cudaError_t e);

}  // namespace reduce
