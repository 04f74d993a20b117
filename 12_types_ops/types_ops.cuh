// Step 12's launchers: the reduction of n elements of T under operator O (ops.hpp), and CUB's
// DeviceReduce for the same type and operator, the bar it is measured against.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "ops.hpp"
#include "step.cuh"

namespace step12 {

// Threads per block: step 10's measured best, fixed here (a template parameter of every kernel), so
// --block is refused with this reason; kBlock is the rule's size for the kernels.
constexpr reduce::BlockRule kBlockRule =
    reduce::BlockRule::always(512, "12_types_ops runs 512 threads per block (a template parameter, step 10's default)");
constexpr int kBlock = kBlockRule.size;

template <typename T, reduce::Op O>
using State = typename reduce::op_t<O, T>::State;

// Scratch for launch(): zero-filled before the first launch, left zero-filled by every launch.
template <typename T, reduce::Op O>
std::size_t scratch_bytes(std::int64_t n, const reduce::LaunchConfig& cfg);

// Reduces in[0..n) under O into *out (device pointers) on stream, in one cooperative launch.
// Never synchronizes, allocates or modifies in. n = 0 gives O's identity.
template <typename T, reduce::Op O>
cudaError_t launch(const T* in, std::int64_t n, State<T, O>* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream);

// CUB's DeviceReduce for the same type and operator, as a user would call it: Sum (int32 into int64
// through Reduce with an int64 initial value), Min, Max; for stats the four passes a user would
// otherwise make (Sum, Min, Max, and TransformReduce for the sum of squares) into the matching fields
// of *out (mean and variance are left alone). cub_scratch_bytes gives the temporary storage.
template <typename T, reduce::Op O>
std::size_t cub_scratch_bytes(std::int64_t n);
template <typename T, reduce::Op O>
cudaError_t cub_launch(const T* in, std::int64_t n, State<T, O>* out, reduce::Scratch scratch, cudaStream_t stream);

}  // namespace step12
