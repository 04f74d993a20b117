// Step 16's two modes whose bits do not depend on the number of ranks.
//
// The ordinary mode adds N partial sums, one per GPU, so its result changes with N: each GPU's partial
// groups the elements of its shard, and the shards change with N. Two ways out:
//
// Sum::order (--reproducible): 14_reproducible's order (order.hpp). Tiles whose size depends on the
// global n only, each summed in a fixed order, the tile sums combined in a fixed tree. The shards are
// cut on tile boundaries of the global n (step14::shard_tiles): rank r sums its whole tiles
// (step14::sum_shard_tiles), the ranks gather all tile sums in tile order, and every rank combines them
// in the tree (step14::combine_tile_sums). Which rank summed a tile changes nothing.
//
// Sum::exact (--exact): 15_exact's accumulator (exact.cuh). Each rank adds its shard (any contiguous cut,
// step16::shard_of) exactly into integer limbs; one ncclAllReduce of int64 with ncclSum adds the
// ranks' limbs, and every rank rounds the sum once to float. Integer addition is associative, so NCCL's
// ring or tree, its channels and the rank count cannot change the result: it is the correctly rounded
// exact sum, as on one GPU.
//
// Either way 1, 2, 3, ... ranks give the single launch's bits (single_launch below). Collectives go
// through NCCL when each rank has its own GPU. NCCL refuses two ranks on one GPU, so N virtual ranks on
// one GPU, each with its own stream and buffers, exchange their slots by device copies instead (the
// same slots, the same order) and, in the exact mode, add the gathered limbs with one small kernel.
// Every rank ends with the same total. Throws reduce::NoUsableDevice (exit 77) with too few GPUs or
// too little memory, reduce::UsageError for bad arguments, reduce::CudaError / NcclError on a failure.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "device.cuh"
#include "multi_gpu.hpp"
#include "report.hpp"
#include "step.cuh"
#include "team.cuh"

namespace step16 {

enum class Sum { order, exact };  // 14_reproducible's fixed order, 15_exact's integer accumulator

// The single-GPU step each mode must match: step14::kStep or step15::kStep.
const reduce::Step& single_step(Sum sum);

// That step's one launch over host[0..n) on `device` (cfg.grid = grid when > 0): the bits every rank
// count must give.
float single_launch(Sum sum, const float* host, std::int64_t n, int device, int block, std::int64_t grid = 0);

struct ReproducibleResult {
  std::vector<double> ms;      // per timed run (rounds.cuh's timing)
  reduce::Summary summary;     // of ms
  std::vector<float> results;  // per run, warm-up runs first: rank 0's total
  bool ranks_agree = true;     // every rank's total had rank 0's bits, every run
  bool runs_identical = true;  // every run had run 0's bits
};

// A team of ranks for one of the two sums. Load once, run many times.
class ReproducibleTeam {
 public:
  // `ranks` virtual ranks on `device`: each its own stream, shard and buffers. block: threads per block
  // of each rank's launch (the mode's step's rule); grid: its blocks when > 0, else the step's choice.
  static ReproducibleTeam virtual_ranks(Sum sum, int device, int ranks, int block, std::int64_t grid = 0);
  // One rank per GPU 0 .. gpus-1, one process (ncclCommInitAll).
  static ReproducibleTeam nccl_ranks(Sum sum, int gpus, int block, std::int64_t grid = 0);

  ReproducibleTeam(ReproducibleTeam&&) noexcept;
  ReproducibleTeam& operator=(ReproducibleTeam&&) noexcept;
  ~ReproducibleTeam();

  // Copies rank r's shard of host[0..n) to its device.
  void load(const float* host, std::int64_t n);
  std::vector<RankGpu*> lanes();  // every rank's, in rank order: the streams its runs use
  void prepare(int runs);         // one NaN-filled slot per run on every rank
  // One sum of the loaded array, enqueued on every rank's stream, nothing timed (rounds.cuh times it):
  // each rank's shard into its slot, the slots exchanged, every rank's total into slot `run`.
  void enqueue(int run);
  // The exchange alone (NCCL's bare all-gather or all-reduce of the same size; with virtual ranks, the
  // device copies and the limbs' sum): the yardstick of the mode's time.
  void enqueue_collective();
  Totals totals() const;  // the prepared runs' totals, rank 0's (agree: every rank's the same)
  // prepare, then warmup + iters sums (the iters timed through rounds.cuh), for the tests.
  ReproducibleResult run(int warmup, int iters);
  // Rank 0's launch (prepare reads it from a capture of one call) and the run's kernels after the
  // exchange (copies not counted).
  const reduce::LaunchShape& shape() const { return shape_; }
  std::int64_t tiles() const;           // Sum::order: the order's tiles of n
  std::int64_t tiles_per_rank() const;  // Sum::order: the most tiles a rank sums
  int limbs() const;                    // Sum::exact: the accumulator's int64 limbs
  ReproducibleFields fields() const;    // the record's fields the team knows: exact, gpus, ranks, tiles, limbs
  int ranks() const;
  bool virtual_ranks() const { return virtual_; }
  Sum sum() const { return sum_; }
  const reduce::DeviceInfo& first_device() const;
  // Every rank's shard still holds its part of host[0..n) as load() copied it.
  bool input_unchanged(const float* host) const;

  struct Member;

 private:
  ReproducibleTeam() = default;
  // Rank m's shard into its own slot (its tile sums, or its accumulator), on `s`.
  cudaError_t launch_shard(const Member& m, cudaStream_t s) const;
  Sum sum_ = Sum::order;
  bool virtual_ = false;
  std::int64_t n_ = 0;
  int runs_ = 0;
  reduce::LaunchShape shape_;
  std::vector<std::unique_ptr<Member>> members_;
};

}  // namespace step16
