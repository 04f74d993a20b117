// Step 15's launcher, in the suite's step shape (common/step.cuh): the exact sum of n floats, rounded
// once to the nearest float (ties to even). The result depends on the input alone: not on the order, the
// grid, the block size, the GPU or the number of GPUs. It equals Python's math.fsum of the same floats,
// correctly rounded to float.
//
// And its two halves, for a sum over several GPUs (16_multi_gpu's exact mode): each rank calls
// accumulate() on its shard, the ranks' Accs are added word by word (an NCCL all-reduce of kAccWords
// int64 with ncclSum), and round_to_float() rounds the total once. Acc and the rounding: exact_acc.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "exact_acc.hpp"
#include "step.cuh"

namespace step15 {

// Scratch: one Acc, a block counter and a tile counter. It must be zero when a launcher starts (the harness zero-fills
// scratch once) and every launch leaves it zero again, so one scratch serves launches of any n.
std::size_t scratch_bytes(std::int64_t n, const reduce::LaunchConfig& cfg);

// The exact sum of in[0..n) as an Acc, normalized, into *acc_out (device memory): no rounding at all.
// One kernel: cfg.block threads (any power of two 32 ... 1024; the largest that fits where the GPU's
// shared memory per block cannot hold 16 doubles a thread), cfg.grid blocks when > 0 (at most 2^20),
// else enough to fill the device; the last block to finish writes *acc_out. Any alignment of `in`.
cudaError_t accumulate(const float* in, std::int64_t n, Acc* acc_out, reduce::Scratch scratch,
                       const reduce::LaunchConfig& cfg, cudaStream_t stream);

// *out = the float nearest to *acc (rounded_bits in exact_acc.hpp): one thread of one kernel. *acc may
// be any Acc (carry-save, e.g. the word-by-word sum of several ranks' Accs); it is not modified.
cudaError_t round_to_float(const Acc* acc, float* out, cudaStream_t stream);

// The step's launcher: accumulate() with the rounding done by its last block, one kernel, no host sync.
cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream);

extern const reduce::Step kStep;

}  // namespace step15
