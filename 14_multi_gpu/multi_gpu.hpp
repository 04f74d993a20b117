// The CPU side of step 14 (no CUDA, no NCCL, so the CPU tests run everywhere): how the array is cut
// into shards, the command line, and the report of one run.
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

// Options of 14_multi_gpu. The ones every step has (--n, --iters, --warmup, --block, --seed,
// --pattern, --format) are parsed by reduce::parse_options, so they read and fail alike.
struct Options {
  reduce::Options common;
  int gpus = 0;                     // --gpus: 0 means every visible GPU (under mpirun: the ranks)
  bool per_gpu = false;             // --per-gpu: --n counts elements per GPU (weak scaling)
  int sweep_from = -1, sweep_to = -1;  // --sweep A:B: n = 2^A ... 2^B in one process
  bool single_gpu = false;          // --single-gpu: also time step 10 alone on one GPU over the whole array
};

// Throws reduce::UsageError with a one-line message.
Options parse_options(const std::vector<std::string>& args);
Options parse_options(int argc, const char* const* argv);
std::string usage(const char* program, bool mpi, int default_block);

// The total element counts this invocation runs, in order: one, or one per size of the sweep.
// `gpus` is the resolved number of GPUs (--per-gpu multiplies by it).
std::vector<std::int64_t> sizes(const Options& opt, int gpus);

// One run's measurements and checks: one JSON record, or a few lines of text.
struct Record {
  std::string mode;               // "single_process" or "mpi"
  int gpus = 0;
  std::int64_t n = 0;
  std::int64_t n_per_gpu = 0;     // with --per-gpu, else 0
  std::int64_t shard_min = 0, shard_max = 0;
  reduce::Pattern pattern = reduce::Pattern::uniform;
  std::uint64_t seed = 0;
  int block = 0, iters = 0, warmup = 0;
  reduce::Summary ms;             // end to end: cold L2 on every GPU, to the total on every GPU
  reduce::Summary collective_ms;  // the all-gather of the partials plus the add in rank order, alone
  double single_gpu_ms = 0.0;     // step 10 alone on one GPU over the whole array; 0: not measured
  double result = 0.0, reference = 0.0, abs_error = 0.0, tolerance = 0.0;
  bool exact_check = false;
  int runs_correct = 0, runs_total = 0;
  bool runs_identical = false;    // every run's total bitwise the same
  bool gpus_agree = false;        // every GPU holds the same bits
  bool single_gpu_correct = true; // the single-GPU baseline's results, when measured
  bool input_unchanged = false;
  bool passed = false;
  std::string device;             // the first GPU's name
  int cuda_runtime = 0, cuda_driver = 0, nccl_version = 0;
};

// Bytes read over the median time, decimal GB/s; the collective's share of the median; the
// single-GPU time over this one (0 when not measured).
double gbps(const Record& r);
double collective_share(const Record& r);
double speedup(const Record& r);

std::string format_json(const Record& r);
std::string format_text(const Record& r);
std::string nccl_version_string(int code);  // 22803 -> "2.28.3"

}  // namespace multigpu
