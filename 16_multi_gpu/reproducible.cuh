// Step 14's reproducible mode: one float sum over N ranks whose bits do not depend on N, and equal
// 14_reproducible's on one GPU.
//
// Step 14's ordinary mode adds N partial sums, one per GPU, so its result changes with N: each GPU's
// partial groups the elements of its shard, and the shards change with N. Here the grouping is step
// 15's (14_reproducible/order.hpp): tiles whose size depends on the global n only, each tile summed in
// a fixed order, the tile sums combined in a fixed tree. The shards are cut on tile boundaries of the
// global n (repro::shard_tiles): rank r sums its whole tiles into tile sums (repro::sum_shard_tiles),
// the ranks gather all tile sums in tile order, and every rank combines them in 15's tree
// (repro::combine_tile_sums). Which rank summed a tile changes nothing, so 1, 2, 3, ... ranks give the
// same bits as 14_reproducible's single launch.
//
// The gather: through NCCL (one in-place ncclAllGather of `per` floats per rank, grouped) when each
// rank has its own GPU; NCCL refuses two ranks on one GPU, so on one GPU N virtual ranks, each with
// its own stream and buffers, gather by device copies between their buffers (the same slots, the same
// order). Either way every rank ends with the same total.
//
// For 14's main (the signature to wire to an option):
//   multigpu::ReproducibleResult multigpu::reproducible_sum(
//       const float* host, std::int64_t n, int ranks, bool virtual_ranks, int warmup, int iters, int block = 512);
//   host[0..n): the whole input in host memory; ranks >= 1; virtual_ranks: all ranks on device 0 (else
//   one rank per GPU 0 .. ranks-1 through NCCL); warmup + iters runs, the iters timed with the L2 of
//   every GPU flushed before each. Throws reduce::NoUsableDevice (exit 77) with too few GPUs or too
//   little memory, reduce::UsageError for bad arguments, reduce::CudaError / NcclError on a failure.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "device.cuh"
#include "report.hpp"

namespace multigpu {

struct ReproducibleResult {
  std::vector<double> ms;      // per timed run: from the start to the last rank's total (ms)
  reduce::Summary summary;     // of ms
  std::vector<float> results;  // per run, warm-up runs first: rank 0's total
  bool ranks_agree = true;     // every rank's total had rank 0's bits, every run
  bool runs_identical = true;  // every run had run 0's bits
  int ranks = 0;
  bool virtual_ranks = false;
  std::int64_t tiles = 0, tiles_per_rank = 0;
};

// A team of ranks for the reproducible sum. Load once, run many times.
class ReproducibleTeam {
 public:
  // `ranks` virtual ranks on `device`: each its own stream, shard, tile-sum and result buffers.
  static ReproducibleTeam virtual_ranks(int device, int ranks, int block = 512);
  // One rank per GPU 0 .. gpus-1, one process (ncclCommInitAll).
  static ReproducibleTeam nccl_ranks(int gpus, int block = 512);

  ReproducibleTeam(ReproducibleTeam&&) noexcept;
  ReproducibleTeam& operator=(ReproducibleTeam&&) noexcept;
  ~ReproducibleTeam();

  // Copies rank r's shard of host[0..n) (tiles repro::shard_tiles(n, ranks, r)) to its device.
  void load(const float* host, std::int64_t n);
  // warmup + iters sums of the loaded array (the iters timed, L2 flushed before each).
  ReproducibleResult run(int warmup, int iters);
  int ranks() const;
  const reduce::DeviceInfo& first_device() const;
  // Every rank's shard still holds its part of host[0..n) as load() copied it.
  bool input_unchanged(const float* host) const;

  struct Member;

 private:
  ReproducibleTeam() = default;
  bool virtual_ = false;
  int block_ = 512;
  std::int64_t n_ = 0;
  std::vector<std::unique_ptr<Member>> members_;
};

ReproducibleResult reproducible_sum(const float* host, std::int64_t n, int ranks, bool virtual_ranks, int warmup,
                                    int iters, int block = 512);

}  // namespace multigpu
