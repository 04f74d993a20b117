// The contract between a step's kernel file and everything else (main, tests, benchmarks).
//
// A step file defines, in its own namespace stepNN, one `const reduce::Step kStep` that names the
// step and points at two host functions:
//   scratch_bytes(n, cfg)  how much device scratch space the launcher needs for n elements; the caller
//                          allocates it once, outside any timed region, fills it with zeros and
//                          hands the same scratch to every launch on one stream;
//   launch(in, n, out, scratch, cfg, stream)
//                          enqueues the reduction of the n floats at `in` into the single float `out`
//                          (both device pointers) on `stream` and returns the first CUDA error. It never
//                          synchronizes, allocates, copies to the host or modifies `in`.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "cuda_check.cuh"

namespace reduce {

constexpr int kDefaultBlock = 256;  // threads per block when neither --block nor the step says otherwise

// How a program's threads per block are decided: the one rule that the parser, --help and the record
// all read (every executable has one: a progression step in its Step record, the others in OptionSpec).
//   free    --block N sets it; `size` when absent (the step's measured default);
//   fixed   always `size` (a template parameter, a tuned shape): --block is refused with `reason`;
//   chosen  decided inside at run time (a library, a shape per segment length): --block is refused with
//           `reason`, and the record shows the launch the program reports, or 0.
struct BlockRule {
  enum Kind { free, fixed, chosen };
  Kind kind = free;
  int size = kDefaultBlock;  // free: the default; fixed: the size; chosen: 0
  const char* reason = "";   // fixed and chosen: why --block means nothing here

  static constexpr BlockRule any(int default_size = kDefaultBlock) { return {free, default_size, ""}; }
  static constexpr BlockRule always(int size, const char* why) { return {fixed, size, why}; }
  static constexpr BlockRule inside(const char* why) { return {chosen, 0, why}; }
  bool takes_option() const { return kind == free; }
  const char* kind_name() const { return kind == free ? "free" : kind == fixed ? "fixed" : "chosen"; }
};

// What a launcher enqueues, for the report: the first kernel's grid and block, and how many kernels.
// The engine reads it from a CUDA graph of one call (launch_shape, harness.cuh); launchers report nothing.
struct LaunchShape {
  std::int64_t grid = 0;
  int block = 0;
  int launches = 0;
};

// What the harness tells a launcher about the launch it may make.
struct LaunchConfig {
  int block = kDefaultBlock;  // threads per block (--block): a power of two from 32 to 1024
  int device = 0;             // the CUDA device ordinal the stream belongs to
  int sm_count = 0;           // that device's multiprocessor count, for steps that size their grid from it
  // Blocks of the main kernel when > 0, instead of the step's own choice (--grid): lets a test or a
  // user imitate a GPU with another SM count. Steps whose grid is fixed by their algorithm ignore it.
  std::int64_t grid = 0;
};

// Calls f(std::integral_constant<unsigned, B>{}) with B = block, for every block size the options
// accept (32 ... 1024), so that a step can make its block size a compile-time constant: inside f,
// `launch<block>(...)` instantiates the kernel for that size. Any other value: cudaErrorInvalidValue.
template <typename F>
cudaError_t with_block_size(int block, F&& f) {
  switch (block) {
    case 32:
      return f(std::integral_constant<unsigned, 32>{});
    case 64:
      return f(std::integral_constant<unsigned, 64>{});
    case 128:
      return f(std::integral_constant<unsigned, 128>{});
    case 256:
      return f(std::integral_constant<unsigned, 256>{});
    case 512:
      return f(std::integral_constant<unsigned, 512>{});
    case 1024:
      return f(std::integral_constant<unsigned, 1024>{});
    default:
      return cudaErrorInvalidValue;
  }
}

// Device scratch space handed to a launcher: at least the bytes its scratch_bytes() asked for.
struct Scratch {
  void* data = nullptr;
  std::size_t bytes = 0;
};

struct Step {
  const char* name;    // the folder and executable name, e.g. "01_interleaved"
  const char* lesson;  // what the step teaches, in a few words (the speedup table's second column)
  // True when the same input gives a bitwise-identical result on every run (no floating-point
  // atomics, no order that depends on timing). The harness and the tests check the claim.
  bool deterministic;
  // Its threads per block: free (--block, the step's measured default when absent), or chosen inside
  // (CUB), where --block is refused with the reason.
  BlockRule block;
  std::size_t (*scratch_bytes)(std::int64_t n, const LaunchConfig& cfg);
  cudaError_t (*launch)(const float* in, std::int64_t n, float* out, Scratch scratch, const LaunchConfig& cfg,
                        cudaStream_t stream);
  // True when the launcher relies on the scratch being zero-filled when it starts, and so leaves it
  // zero-filled again when its kernels finish (the tests check that). Other steps may leave anything.
  bool needs_zeroed_scratch = false;
};

// ceil(a / b) for a >= 0 and b > 0: shared so that no step defines its own copy.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace reduce
