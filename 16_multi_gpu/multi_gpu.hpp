// The CPU side of step 16 (no CUDA, no NCCL, so the CPU tests run everywhere): how the array is cut
// into shards, the step's own options, and its own fields of the record.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "options.hpp"
#include "report.hpp"

namespace step16 {

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

// 16's own options, each a field the parser sets (option_spec binds them); as constructed, the defaults.
struct Plan {
  std::int64_t gpus = 0;               // --gpus: 0 means every visible GPU (under mpirun: the ranks)
  bool per_gpu = false;                // --per-gpu: --n counts elements per GPU (weak scaling)
  int sweep_from = -1, sweep_to = -1;  // --sweep A:B: n = 2^A ... 2^B in one process
  bool single_gpu = false;             // --single-gpu: also time step 10 alone on one GPU
  bool reproducible = false;           // --reproducible: 14_reproducible's order over the ranks (ranks.cuh)
  bool exact = false;                  // --exact: 15_exact's accumulators all-reduced (ranks.cuh)
  std::int64_t virtual_ranks = 0;      // --virtual-ranks N: N ranks on GPU 0 (0: one rank per GPU)
};

// What 16 adds to the common command line (--gpus, --per-gpu, --sweep, --single-gpu, --reproducible,
// --exact, --virtual-ranks), bound to plan's fields, its --help text, and its --n default. mpi: the
// one-process-per-GPU build; default_block: step 10's own. plan must outlive the parse.
reduce::OptionSpec option_spec(bool mpi, int default_block, Plan& plan);

// What the parser cannot check: --n and --sweep exclude each other, under MPI --gpus must equal the
// ranks, --reproducible and --exact exclude each other, and each, like --virtual-ranks, which needs one
// of them, runs in one process without --single-gpu (and --virtual-ranks without --gpus). Throws
// reduce::UsageError. (--device is refused by the parser: option_spec says why.)
void check_options(const reduce::Options& opt, const Plan& plan, bool mpi, int mpi_ranks = 1);

// The total element counts this invocation runs, in order: one (n), or one per size of the sweep.
// `gpus` is the resolved number of GPUs (--per-gpu multiplies by it). Throws reduce::UsageError past 2^36.
std::vector<std::int64_t> sizes(const Plan& plan, std::int64_t n, int gpus);

// The timing's CPU side (rounds.cuh runs it on the GPUs).
// Round r's order of `count` contenders: position k runs contender (k + r) mod count, so over `count`
// rounds each runs at each position once, and none always runs first (after a flush of another's data).
std::vector<int> round_order(int count, int round);
// The median over rounds of more[r] / base[r]: two contenders' samples paired by round, so that a slow
// round slows both. Below 1: `more` read faster than `base`. 0 where no round has base[r] > 0.
double paired_ratio(const std::vector<double>& more, const std::vector<double>& base);
// Whether a contender doing all of base's work and more reads no faster than base beyond `noise` (a
// fraction: 0.05 lets it read 5% under base): paired_ratio >= 1 - noise, or base took no time at all.
bool not_faster_beyond_noise(const std::vector<double>& more, const std::vector<double>& base, double noise);

// How a record was timed, and what it is compared with in the same rounds (rounds.cuh).
struct Timing {
  reduce::Summary collective;  // the mode's collective alone: NCCL's bare all-gather or all-reduce, the yardstick
  reduce::Summary single;      // the mode's step alone on the first GPU (no samples: not measured)
  std::string single_step;     // which step that is ("10_loads_in_flight", "14_reproducible", "15_exact")
  double head_start_ms = 0.0;  // the head start the record's runs had (the last one)
  double enqueue_ms = 0.0;     // the median time the host took to enqueue one of the record's runs
  int late_runs = 0;           // timed runs whose enqueue outlasted their head start (host time may be in them)
};

// What one size's run of the ordinary mode measured beyond the common record.
struct TeamFields {
  std::string mode;  // "single_process" or "mpi"
  int gpus = 0;
  std::int64_t n_per_gpu = 0;      // with --per-gpu, else 0 (shard_min and shard_max follow from n and gpus)
  bool single_gpu_correct = true;  // the baseline's results (step 10 alone on one GPU), when measured
  bool gpus_agree = false;         // every GPU (every process) holds the same bits
  int nccl_version = 0;            // ncclGetVersion's code
  Timing timing;
};

// Appends 16's fields to r.extra, in a fixed order (a sweep's csv has one header): mode, gpus,
// n_per_gpu, shard_min, shard_max, single_gpu_correct, gpus_agree, nccl_version, then the timing's
// (add_timing_fields). Sets r.pct_peak against the N GPUs' summed theoretical peak and r.fits_in_l2
// of one GPU's shard. Call after reduce::finish(r).
void add_team_fields(reduce::Report& r, const TeamFields& t);

// The timing's fields: collective_ms, _min_ms, _max_ms, collective_share (collective_ms / median_ms),
// head_start_ms, enqueue_ms, late_runs; where a step alone was measured, single_gpu_step, its
// comparison (single_gpu_median_ms ... vs_single_gpu) and time_over_floor = median_ms /
// (collective_ms + single_gpu_median_ms), the record's time over the collective's and one GPU's.
void add_timing_fields(reduce::Report& r, const Timing& t);

// What one size's run of the reproducible or the exact mode measured beyond the common record.
struct ReproducibleFields {
  bool exact = false;  // --exact, else --reproducible
  int gpus = 0, ranks = 0;
  bool virtual_ranks = false;
  std::int64_t n_per_gpu = 0;                  // with --per-gpu (per rank), else 0
  std::int64_t tiles = 0, tiles_per_rank = 0;  // --reproducible: the order's tiles
  int limbs = 0;                               // --exact: the accumulator's int64 limbs
  std::string result_bits;                     // rank 0's total, last run
  std::string single_bits;                     // the mode's step (14_reproducible, 15_exact) alone on the first GPU
  bool ranks_agree = false;                    // every rank held rank 0's bits, every run
  int nccl_version = 0;
  Timing timing;
  reduce::Summary ordinary;  // the ordinary mode on as many GPUs, in the same rounds
};

// Appends the mode's fields to r.extra and fails r where the bits differ from the single launch's or
// the ranks disagree; sets r.pct_peak against the GPUs' summed peak. --reproducible: mode
// "reproducible" or "reproducible_virtual", gpus, ranks, n_per_gpu, tiles, tiles_per_rank, result_bits,
// step14_bits, same_as_step14; --exact: mode "exact" or "exact_virtual", gpus, ranks, n_per_gpu,
// shard_min, shard_max, limbs, result_bits, single_bits, same_as_single; then ranks_agree, nccl_version,
// the ordinary mode's comparison (ordinary_median_ms ... vs_ordinary) and the timing's fields
// (add_timing_fields). Call after reduce::finish(r).
void add_reproducible_fields(reduce::Report& r, const ReproducibleFields& f);

std::string nccl_version_string(int code);  // 22803 -> "2.28.3"

}  // namespace step16
