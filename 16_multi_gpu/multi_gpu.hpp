// The CPU side of step 16 (no CUDA, no NCCL, so the CPU tests run everywhere): how the array is cut
// into shards, the step's own options, and its own fields of the record.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "options.hpp"
#include "report.hpp"

namespace multigpu {

// Rank r of `ranks` holds elements [begin, begin + count) of the n-element array. Shards are
// contiguous, in rank order, and their lengths differ by at most one: begin = floor(r * n / ranks).
// When n < ranks some shards are empty (a GPU then contributes 0, the identity).
struct Shard {
  std::int64_t begin = 0;
  std::int64_t count = 0;
};
// 0 <= rank < ranks <= kMaxGpus and 0 <= n <= reduce::max_n(), so r * n stays far below 2^63.
Shard shard_of(std::int64_t n, int ranks, int rank);

constexpr int kMaxGpus = 1024;

// This step's standard experiment: 2^30 floats (4.3 GB) in all, so that each GPU's shard is large
// enough that the collective, whose cost does not depend on n, is a small share of the time.
constexpr std::int64_t kDefaultN = std::int64_t{1} << 30;

// What 16 adds to the common command line (--gpus, --per-gpu, --sweep, --single-gpu, --reproducible,
// --exact, --virtual-ranks), its --help text, and its --n default. mpi: the one-process-per-GPU build;
// default_block: step 10's own.
reduce::OptionSpec option_spec(bool mpi, int default_block);

// What the parser cannot check: --n and --sweep exclude each other, under MPI --gpus must equal the
// ranks, --reproducible and --exact exclude each other, and each, like --virtual-ranks, which needs one
// of them, runs in one process without --single-gpu (and --virtual-ranks without --gpus). Throws
// reduce::UsageError. (--device is refused by the parser: option_spec says why.)
void check_options(const reduce::Options& opt, bool mpi, int mpi_ranks = 1);

// 16's own options, read from reduce::Options::extra.
struct Plan {
  int gpus = 0;                        // --gpus: 0 means every visible GPU (under mpirun: the ranks)
  bool per_gpu = false;                // --per-gpu: --n counts elements per GPU (weak scaling)
  int sweep_from = -1, sweep_to = -1;  // --sweep A:B: n = 2^A ... 2^B in one process
  bool single_gpu = false;             // --single-gpu: also time step 10 alone on one GPU
  bool reproducible = false;           // --reproducible: 14_reproducible's order over the ranks (ranks.cuh)
  bool exact = false;                  // --exact: 15_exact's accumulators all-reduced (ranks.cuh)
  int virtual_ranks = 0;               // --virtual-ranks N: N ranks on GPU 0 (0: one rank per GPU)
};
Plan plan_of(const reduce::Options& opt);

// The total element counts this invocation runs, in order: one (n), or one per size of the sweep.
// `gpus` is the resolved number of GPUs (--per-gpu multiplies by it). Throws reduce::UsageError past 2^36.
std::vector<std::int64_t> sizes(const Plan& plan, std::int64_t n, int gpus);

// What one size's run measured beyond the common record.
struct TeamFields {
  std::string mode;                 // "single_process" or "mpi"
  int gpus = 0;
  std::int64_t n_per_gpu = 0;       // with --per-gpu, else 0 (shard_min and shard_max follow from n and gpus)
  reduce::Summary collective_ms;    // the all-gather of the partials plus the add in rank order, alone
  bool single_gpu_correct = true;   // the baseline's results (step 10 alone on one GPU), when measured
  bool gpus_agree = false;          // every GPU (every process) holds the same bits
  int nccl_version = 0;             // ncclGetVersion's code
};

// Appends 16's fields to r.extra, in a fixed order (a sweep's csv has one header), and sets
// r.pct_peak against the N GPUs' summed theoretical peak and r.fits_in_l2 of one GPU's shard. Call after reduce::finish(r). The single-GPU
// baseline, where measured, follows through reduce::add_comparison(r, "single_gpu", ...).
void add_team_fields(reduce::Report& r, const TeamFields& t);

// What one size's run of the reproducible or the exact mode measured beyond the common record.
struct ReproducibleFields {
  bool exact = false;                  // --exact, else --reproducible
  int gpus = 0, ranks = 0;
  bool virtual_ranks = false;
  std::int64_t n_per_gpu = 0;          // with --per-gpu (per rank), else 0
  std::int64_t tiles = 0, tiles_per_rank = 0;  // --reproducible: the order's tiles
  int limbs = 0;                       // --exact: the accumulator's int64 limbs
  std::string result_bits;             // rank 0's total, last run
  std::string single_bits;             // the mode's step (14_reproducible, 15_exact) launched once on the first GPU
  bool ranks_agree = false;            // every rank held rank 0's bits, every run
  int nccl_version = 0;
};

// Appends the mode's fields to r.extra and fails r where the bits differ from the single launch's or
// the ranks disagree; sets r.pct_peak against the GPUs' summed peak. --reproducible: mode
// "reproducible" or "reproducible_virtual", gpus, ranks, n_per_gpu, tiles, tiles_per_rank, result_bits,
// step15_bits, same_as_step15 (the names its committed records have; the step is now 14_reproducible),
// ranks_agree, nccl_version. --exact: mode "exact" or "exact_virtual", gpus, ranks, n_per_gpu,
// shard_min, shard_max, limbs, result_bits, single_bits, same_as_single, ranks_agree, nccl_version. Call
// after reduce::finish(r); the ordinary mode's time follows through reduce::add_comparison(r, "ordinary", ...).
void add_reproducible_fields(reduce::Report& r, const ReproducibleFields& f);

double collective_share(const reduce::Report& r, const TeamFields& t);  // collective median / end-to-end median
std::string nccl_version_string(int code);                              // 22803 -> "2.28.3"

}  // namespace multigpu
