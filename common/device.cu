#include "device.cuh"

#include <algorithm>

#include "options.hpp"

namespace reduce {
namespace {

__global__ void read_everything(const int4* __restrict__ data, std::size_t count, int* sink) {
  int acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const int4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) *sink = acc;  // practically never taken; keeps the loads alive
}

}  // namespace

bool is_unsupported_device_error(cudaError_t e) {
  // cudaErrorNotSupported: a launcher's answer when the GPU lacks a feature it needs (07: cooperative launch).
  return e == cudaErrorNoKernelImageForDevice || e == cudaErrorUnsupportedPtxVersion ||
         e == cudaErrorInsufficientDriver || e == cudaErrorInvalidPtx || e == cudaErrorNotSupported;
}

DeviceInfo open_device(int ordinal) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    throw NoUsableDevice(std::string("the CUDA runtime reports ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                         "); is an NVIDIA GPU with its driver present?");
  if (count == 0) throw NoUsableDevice("the CUDA runtime found no device");
  if (ordinal >= count)
    throw UsageError("invalid value '" + std::to_string(ordinal) + "' for --device: this machine has " +
                     std::to_string(count) + " CUDA device(s), numbered from 0");
  CUDA_CHECK(cudaSetDevice(ordinal));

  DeviceInfo d;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  d.name = prop.name;
  d.ordinal = ordinal;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  // Clock and bus width come from attributes: CUDA 13 removed them from cudaDeviceProp.
  int sms = 0, l2 = 0, clock_khz = 0, bus_bits = 0, sm_clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, ordinal));
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, ordinal));
  CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, ordinal));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, ordinal));
  d.sm_count = sms;
  d.l2_bytes = l2;
  d.peak_gbps = theoretical_gbps(clock_khz, bus_bits);
  d.sm_clock_mhz = sm_clock_khz / 1e3;
  d.mem_clock_mhz = clock_khz / 1e3;
  CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  return d;
}

L2Flusher::L2Flusher(const DeviceInfo& device)
    : buffer_(std::max<std::int64_t>(2 * device.l2_bytes, 1 << 20) / sizeof(int4)),
      sink_(1),
      blocks_(device.sm_count * 4) {
  // Written once so the flush reads initialized memory (compute-sanitizer's initcheck stays clean).
  CUDA_CHECK(cudaMemset(buffer_.get(), 0, buffer_.bytes()));
  CUDA_CHECK(cudaDeviceSynchronize());  // cudaMemset may still run; the timed stream does not wait for it
}

void L2Flusher::flush(cudaStream_t stream) {
  read_everything<<<blocks_, 512, 0, stream>>>(buffer_.get(), buffer_.size(), sink_.get());
  CUDA_CHECK(cudaGetLastError());
}

float reduce_once(const Step& step, const float* in, std::int64_t n, const LaunchConfig& cfg, cudaStream_t stream,
                  Scratch scratch) {
  DeviceBuffer<unsigned char> own;
  if (!scratch.data) {
    own = DeviceBuffer<unsigned char>(step.scratch_bytes(n, cfg));
    CUDA_CHECK(cudaMemsetAsync(own.get(), 0, own.bytes(), stream));  // the contract in step.cuh
    scratch = Scratch{own.get(), own.bytes()};
  }
  DeviceBuffer<float> out(1);
  CUDA_CHECK(cudaMemsetAsync(out.get(), 0xFF, sizeof(float), stream));  // NaN
  CUDA_CHECK(step.launch(in, n, out.get(), scratch, cfg, stream));
  CUDA_CHECK(cudaGetLastError());
  float result = 0.0f;
  CUDA_CHECK(cudaMemcpyAsync(&result, out.get(), sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return result;
}

}  // namespace reduce
