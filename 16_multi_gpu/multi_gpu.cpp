#include "multi_gpu.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string_view>

#include "harness.cuh"  // reduce::add_comparison

namespace step16 {
namespace {

using reduce::UsageError;

// "A:B" with 0 <= A <= B <= 36, or nullopt-like false.
bool parse_sweep(std::string_view text, int* from, int* to) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  auto small = [](std::string_view t, int* v) {
    if (t.empty() || t[0] == '+' || t[0] == '-') return false;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), *v);
    return ec == std::errc{} && end == t.data() + t.size() && *v >= 0 && *v <= 36;
  };
  return small(text.substr(0, colon), from) && small(text.substr(colon + 1), to) && *from <= *to;
}

}  // namespace

Shard shard_of(std::int64_t n, int ranks, int rank) {
  const std::int64_t begin = n * rank / ranks;
  const std::int64_t end = n * (rank + 1) / ranks;
  return Shard{begin, end - begin};
}

reduce::OptionSpec option_spec(bool mpi, int default_block, Plan& plan) {
  reduce::OptionSpec spec;
  spec.summary = mpi ? "Sums n floats spread over N GPUs, one process per GPU under mpirun -np N"
                     : "Sums n floats spread over N GPUs, all driven by this one process";
  spec.default_n = kDefaultN;
  spec.block = reduce::BlockRule::any(default_block);
  spec.refused = {
      {"--device", mpi ? "rank r uses the r-th GPU of its machine" : "the step uses GPUs 0 .. N-1 (--gpus N)"}};
  const std::string by_rank =
      mpi ? "GPUs, one per rank: must equal mpirun's -np when given" : "GPUs 0 .. N-1 (every visible GPU when absent)";
  reduce::ExtraOption sweep{
      "--sweep", {}, "n = 2^A ... 2^B in this one process, one record each (instead of --n)", "A:B"};
  sweep.check = [](const std::string& v) -> std::string {
    int a = 0, b = 0;
    return parse_sweep(v, &a, &b) ? "" : "A:B with 0 <= A <= B <= 36";
  };
  sweep.set = [&plan](const std::string& v) { parse_sweep(v, &plan.sweep_from, &plan.sweep_to); };
  spec.extra = {reduce::integer_option("--gpus", plan.gpus, 1, kMaxGpus, by_rank),
                reduce::flag_option("--per-gpu", plan.per_gpu,
                                    "--n (or each size of --sweep) counts floats per GPU (weak scaling)"),
                sweep,
                reduce::flag_option("--single-gpu", plan.single_gpu,
                                    "also time step 10 alone on the first GPU over the whole array\n"
                                    "                   (the speedup's baseline; always when N = 1)"),
                reduce::flag_option(
                    "--reproducible", plan.reproducible,
                    "14_reproducible's order over the ranks instead of step 10 per GPU: the same\n"
                    "                   bits for any number of ranks (the ordinary mode's time is measured beside it)"),
                reduce::flag_option("--exact", plan.exact,
                                    "15_exact's accumulator per rank, the ranks' limbs summed by an int64\n"
                                    "                   all-reduce: the correctly rounded sum for any number of ranks"),
                reduce::integer_option("--virtual-ranks", plan.virtual_ranks, 1, kMaxGpus,
                                       "with --reproducible or --exact: N ranks on GPU 0, joined by device copies")};
  spec.notes =
      "Each GPU reduces its shard (about n / N floats) with step 10's kernel; NCCL all-gathers the N partial\n"
      "sums and every GPU adds them in rank order, so the total is bitwise the same on every GPU and run.\n"
      "The default n, 2^30, gives each GPU a shard large enough that the collective is a small share of\n"
      "the time. Everything a record compares is timed one way in interleaved rounds: a head start for the\n"
      "host, every L2 flushed, one start line, the slowest GPU's end. Besides the common fields, a record\n"
      "has mode, gpus, n_per_gpu, shard_min, shard_max, gpus_agree, nccl_version, collective_ms (NCCL's bare\n"
      "collective of the same size, timed the same way), collective_share, head_start_ms, enqueue_ms and\n"
      "late_runs, and where a step alone ran on the first GPU, single_gpu_step, single_gpu_median_ms,\n"
      "vs_single_gpu (the speedup) and time_over_floor (the time over the collective's plus the step's\n"
      "alone); pct_peak is of the N GPUs' summed peak, and grid counts every GPU's blocks. --cpu-runs times\n"
      "the plain CPU loop over the whole array (one core; all cores" +
      std::string(mpi ? ", on rank 0" : "") +
      "), which needs the\nwhole array in host memory: 0 skips it.\n"
      "--reproducible cuts the array on tile boundaries of 14_reproducible's order, sums each rank's tiles,\n"
      "gathers the tile sums (ncclAllGather, or device copies with --virtual-ranks) and combines them in its\n"
      "tree; its record has ranks, tiles, tiles_per_rank, result_bits, step14_bits (14_reproducible alone on\n"
      "the first GPU), same_as_step14, ranks_agree and the ordinary mode's time on as many GPUs, in the same\n"
      "rounds (ordinary_median_ms, vs_ordinary). --exact adds each rank's shard into 15_exact's integer\n"
      "accumulator, sums the ranks' accumulators with one ncclAllReduce of int64 (device copies and a kernel\n"
      "with --virtual-ranks) and rounds once; its record has ranks, shard_min, shard_max, limbs, result_bits,\n"
      "single_bits (15_exact alone on the first GPU), same_as_single, ranks_agree and the ordinary mode's time.";
  return spec;
}

void check_options(const reduce::Options& opt, const Plan& plan, bool mpi, int mpi_ranks) {
  if (opt.has("--n") && opt.has("--sweep")) throw UsageError("options --n and --sweep exclude each other");
  const char* mode = plan.exact ? "--exact" : "--reproducible";
  if (plan.reproducible && plan.exact) throw UsageError("options --reproducible and --exact exclude each other");
  if (mpi && (plan.reproducible || plan.exact))
    throw UsageError(std::string(mode) + ": one process drives every rank of this mode; run 16_multi_gpu");
  if (plan.virtual_ranks && !plan.reproducible && !plan.exact)
    throw UsageError("--virtual-ranks needs --reproducible or --exact");
  if (plan.virtual_ranks && plan.gpus) throw UsageError("options --virtual-ranks and --gpus exclude each other");
  if ((plan.reproducible || plan.exact) && plan.single_gpu)
    throw UsageError(std::string("--single-gpu: ") + mode + " always measures the ordinary mode beside it");
  if (mpi && plan.gpus != 0 && plan.gpus != mpi_ranks)
    throw UsageError("--gpus " + std::to_string(plan.gpus) + " differs from the " + std::to_string(mpi_ranks) +
                     " MPI ranks (one GPU per rank; start as many ranks as GPUs)");
  // Where the number of GPUs is known before any is touched, --per-gpu's total is checked now too.
  if (const int known = mpi ? mpi_ranks : plan.virtual_ranks ? plan.virtual_ranks : plan.gpus; known > 0)
    sizes(plan, opt.n, known);
}

std::vector<std::int64_t> sizes(const Plan& plan, std::int64_t n, int gpus) {
  std::vector<std::int64_t> out;
  if (plan.sweep_from >= 0)
    for (int k = plan.sweep_from; k <= plan.sweep_to; ++k) out.push_back(std::int64_t{1} << k);
  else
    out.push_back(n);
  for (std::int64_t& m : out) {
    if (plan.per_gpu) m *= gpus;
    if (m > reduce::max_n())
      throw UsageError("n = " + std::to_string(m) + " is over the largest count, 2^36 (--n x --gpus with --per-gpu)");
  }
  return out;
}

std::vector<int> round_order(int count, int round) {
  std::vector<int> order(count > 0 ? count : 0);
  for (int k = 0; k < count; ++k) order[k] = (k + round) % count;
  return order;
}

double paired_ratio(const std::vector<double>& more, const std::vector<double>& base) {
  std::vector<double> ratios;
  for (std::size_t r = 0; r < more.size() && r < base.size(); ++r)
    if (base[r] > 0) ratios.push_back(more[r] / base[r]);
  return reduce::summarize(ratios).median;
}

bool not_faster_beyond_noise(const std::vector<double>& more, const std::vector<double>& base, double noise) {
  if (std::none_of(base.begin(), base.end(), [](double ms) { return ms > 0; })) return true;
  return paired_ratio(more, base) >= 1.0 - noise;
}

std::string nccl_version_string(int code) {
  // NCCL_VERSION(X, Y, Z) is X * 10000 + Y * 100 + Z from NCCL 2.9 on.
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}

void add_timing_fields(reduce::Report& r, const Timing& t) {
  using reduce::number_field;
  r.extra.insert(r.extra.end(),
                 {
                     number_field("collective_ms", t.collective.median),
                     number_field("collective_min_ms", t.collective.min),
                     number_field("collective_max_ms", t.collective.max),
                     number_field("collective_share", r.ms.median > 0 ? t.collective.median / r.ms.median : 0.0),
                     number_field("head_start_ms", t.head_start_ms),
                     number_field("enqueue_ms", t.enqueue_ms),
                     number_field("late_runs", t.late_runs),
                 });
  if (t.single.samples.empty()) return;
  r.extra.push_back(reduce::text_field("single_gpu_step", t.single_step));
  reduce::add_comparison(r, "single_gpu", t.single);
  const double floor = t.collective.median + t.single.median;
  r.extra.push_back(number_field("time_over_floor", floor > 0 ? r.ms.median / floor : 0.0));
}

void add_team_fields(reduce::Report& r, const TeamFields& t) {
  // N GPUs read N memories at once: the aggregate is measured against their summed peak.
  const double peak = r.device.peak_gbps * t.gpus;
  r.pct_peak = peak > 0 ? 100.0 * r.gbps / peak : 0.0;
  const std::int64_t gpus = t.gpus > 0 ? t.gpus : 1;
  r.fits_in_l2 = (r.n + gpus - 1) / gpus * static_cast<std::int64_t>(sizeof(float)) <= r.device.l2_bytes;  // per GPU
  using reduce::bool_field;
  using reduce::number_field;
  r.extra.insert(
      r.extra.end(),
      {
          reduce::text_field("mode", t.mode),
          number_field("gpus", t.gpus),
          number_field("n_per_gpu", static_cast<double>(t.n_per_gpu)),
          number_field("shard_min", static_cast<double>(r.n / gpus)),  // shard_of's lengths differ by one at most
          number_field("shard_max", static_cast<double>((r.n + gpus - 1) / gpus)),
          bool_field("single_gpu_correct", t.single_gpu_correct),
          bool_field("gpus_agree", t.gpus_agree),
          reduce::text_field("nccl_version", nccl_version_string(t.nccl_version)),
      });
  add_timing_fields(r, t.timing);
}

void add_reproducible_fields(reduce::Report& r, const ReproducibleFields& f) {
  const double peak = r.device.peak_gbps * f.gpus;
  r.pct_peak = peak > 0 ? 100.0 * r.gbps / peak : 0.0;
  const bool same = f.result_bits == f.single_bits;
  if (!same)
    std::fprintf(stderr, "16_multi_gpu: n = %lld, %d ranks: bits %s, %s's single launch gives %s\n",
                 static_cast<long long>(r.n), f.ranks, f.result_bits.c_str(), f.exact ? "15_exact" : "14_reproducible",
                 f.single_bits.c_str());
  if (!f.ranks_agree)
    std::fprintf(stderr, "16_multi_gpu: n = %lld: the ranks hold different totals\n", static_cast<long long>(r.n));
  r.passed = r.passed && same && f.ranks_agree;
  using reduce::bool_field;
  using reduce::number_field;
  using reduce::text_field;
  const std::int64_t ranks = f.ranks > 0 ? f.ranks : 1;
  const std::string mode = std::string(f.exact ? "exact" : "reproducible") + (f.virtual_ranks ? "_virtual" : "");
  r.extra.insert(r.extra.end(), {text_field("mode", mode), number_field("gpus", f.gpus), number_field("ranks", f.ranks),
                                 number_field("n_per_gpu", static_cast<double>(f.n_per_gpu))});
  if (f.exact)
    r.extra.insert(r.extra.end(), {number_field("shard_min", static_cast<double>(r.n / ranks)),  // shard_of's cut
                                   number_field("shard_max", static_cast<double>((r.n + ranks - 1) / ranks)),
                                   number_field("limbs", f.limbs), text_field("result_bits", f.result_bits),
                                   text_field("single_bits", f.single_bits), bool_field("same_as_single", same)});
  else
    r.extra.insert(r.extra.end(), {number_field("tiles", static_cast<double>(f.tiles)),
                                   number_field("tiles_per_rank", static_cast<double>(f.tiles_per_rank)),
                                   text_field("result_bits", f.result_bits), text_field("step14_bits", f.single_bits),
                                   bool_field("same_as_step14", same)});
  r.extra.insert(r.extra.end(), {bool_field("ranks_agree", f.ranks_agree),
                                 text_field("nccl_version", nccl_version_string(f.nccl_version))});
  reduce::add_comparison(r, "ordinary", f.ordinary);  // the ordinary mode on as many GPUs
  add_timing_fields(r, f.timing);
}

}  // namespace step16
