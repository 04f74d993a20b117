#include "multi_gpu.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace multigpu {
namespace {

using reduce::UsageError;

int parse_small_int(const std::string& text, int lo, int hi) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || text[0] == '+' || ec != std::errc{} || end != text.data() + text.size() || v < lo || v > hi)
    return -1;
  return v;
}

std::string number(double v) {  // round-trip precision; JSON has no NaN or infinity
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

}  // namespace

Shard shard_of(std::int64_t n, int ranks, int rank) {
  const std::int64_t begin = n * rank / ranks;
  const std::int64_t end = n * (rank + 1) / ranks;
  return Shard{begin, end - begin};
}

Options parse_options(const std::vector<std::string>& args) {
  Options opt;
  std::vector<std::string> rest;  // for reduce::parse_options
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::string value;
    bool has_value = false;
    if (const auto eq = name.find('='); eq != std::string::npos && name.rfind("--", 0) == 0) {
      value = name.substr(eq + 1);
      name.resize(eq);
      has_value = true;
    }
    auto take_value = [&] {
      if (has_value) return;
      if (i + 1 >= args.size()) throw UsageError("option " + name + " needs a value");
      value = args[++i];
    };
    auto flag = [&] {
      if (has_value) throw UsageError("option " + name + " takes no value");
    };
    if (name == "--gpus") {
      take_value();
      opt.gpus = parse_small_int(value, 1, kMaxGpus);
      if (opt.gpus < 0)
        throw UsageError("invalid value '" + value + "' for --gpus: expected a count from 1 to " + std::to_string(kMaxGpus));
    } else if (name == "--sweep") {
      take_value();
      const auto colon = value.find(':');
      const int a = colon == std::string::npos ? -1 : parse_small_int(value.substr(0, colon), 0, 36);
      const int b = colon == std::string::npos ? -1 : parse_small_int(value.substr(colon + 1), 0, 36);
      if (a < 0 || b < a) throw UsageError("invalid value '" + value + "' for --sweep: expected A:B with 0 <= A <= B <= 36");
      opt.sweep_from = a;
      opt.sweep_to = b;
    } else if (name == "--per-gpu") {
      flag();
      opt.per_gpu = true;
    } else if (name == "--single-gpu") {
      flag();
      opt.single_gpu = true;
    } else if (name == "--device" || name == "--cpu-runs") {
      throw UsageError("option " + name + " does not apply to this step (it uses GPUs 0 .. --gpus - 1; see --help)");
    } else {
      rest.push_back(args[i]);
    }
  }
  opt.common = reduce::parse_options(rest);
  if (opt.common.format == reduce::Format::csv) throw UsageError("invalid value 'csv' for --format: expected text or json");
  bool n_given = false;
  for (const std::string& a : rest) n_given = n_given || a == "--n" || a.rfind("--n=", 0) == 0;
  if (n_given && opt.sweep_from >= 0) throw UsageError("options --n and --sweep exclude each other");
  if (!n_given) opt.common.n = std::int64_t{1} << 30;  // this step's standard experiment: 4.3 GB
  return opt;
}

Options parse_options(int argc, const char* const* argv) {
  return parse_options(std::vector<std::string>(argv + 1, argv + argc));
}

std::vector<std::int64_t> sizes(const Options& opt, int gpus) {
  std::vector<std::int64_t> out;
  if (opt.sweep_from >= 0)
    for (int k = opt.sweep_from; k <= opt.sweep_to; ++k) out.push_back(std::int64_t{1} << k);
  else
    out.push_back(opt.common.n);
  for (std::int64_t& n : out) {
    if (opt.per_gpu) n *= gpus;
    if (n > reduce::max_n())
      throw UsageError("n = " + std::to_string(n) + " is over the largest count, 2^36 (--n x --gpus with --per-gpu)");
  }
  return out;
}

std::string usage(const char* program, bool mpi, int default_block) {
  std::ostringstream os;
  os << "usage: " << (mpi ? "mpirun -np N " : "") << program << " [options]\n"
     << "Sums one array of n floats spread over several GPUs: each GPU reduces its shard with step 10's\n"
     << "kernel, NCCL all-gathers the partial sums, and every GPU adds them in rank order (deterministic).\n"
     << (mpi ? "One process per GPU: rank r uses the r-th GPU of its node (ncclCommInitRank).\n"
             : "One process drives every GPU (ncclCommInitAll).\n")
     << "\n"
     << "  --gpus N         GPUs (ranks) 0 .. N-1" << (mpi ? "; must equal mpirun's -np" : "") << "  [all visible]\n"
     << "  --n COUNT        total elements: 1000, 4K, 16M, 1G or 2^k                     [2^30]\n"
     << "  --per-gpu        --n (or each size of --sweep) counts elements per GPU (weak scaling)\n"
     << "  --sweep A:B      run n = 2^A ... 2^B in this one process, one record each (instead of --n)\n"
     << "  --single-gpu     also time step 10 alone on the first GPU over the whole array (the\n"
     << "                   baseline of the speedup); always measured when N = 1\n"
     << "  --iters N        timed runs; the report gives median, min and max            [50]\n"
     << "  --warmup N       untimed runs before them                                    [5]\n"
     << "  --block N        threads per block of step 10, a power of two 32 .. 1024     [" << default_block << "]\n"
     << "  --seed N         seed of the input generator                                 [1]\n"
     << "  --pattern P      constant, int (exact check), uniform, mixed                 [uniform]\n"
     << "  --format F       text, or json (one record per size)                         [text]\n"
     << "  --help           this text\n\n"
     << "Exit codes: 0 every result correct, 1 wrong result or CUDA/NCCL error, 2 bad usage,\n"
     << "77 no GPU, fewer GPUs than --gpus, or too little memory for --n.\n";
  return os.str();
}

double gbps(const Record& r) { return r.ms.median > 0 ? r.n * 4.0 / (r.ms.median * 1e-3) / 1e9 : 0.0; }
double collective_share(const Record& r) { return r.ms.median > 0 ? r.collective_ms.median / r.ms.median : 0.0; }
double speedup(const Record& r) {
  return r.single_gpu_ms > 0 && r.ms.median > 0 ? r.single_gpu_ms / r.ms.median : 0.0;
}

std::string nccl_version_string(int code) {
  // NCCL_VERSION(X, Y, Z) is X * 10000 + Y * 100 + Z from NCCL 2.9 on.
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}

std::string format_json(const Record& r) {
  std::vector<std::pair<std::string, std::string>> f = {
      {"step", quoted("14_multi_gpu")},
      {"mode", quoted(r.mode)},
      {"gpus", number(r.gpus)},
      {"n", number(static_cast<double>(r.n))},
      {"n_per_gpu", number(static_cast<double>(r.n_per_gpu))},
      {"bytes", number(r.n * 4.0)},
      {"shard_min", number(static_cast<double>(r.shard_min))},
      {"shard_max", number(static_cast<double>(r.shard_max))},
      {"pattern", quoted(reduce::to_string(r.pattern))},
      {"seed", number(static_cast<double>(r.seed))},
      {"block", number(r.block)},
      {"iters", number(r.iters)},
      {"warmup", number(r.warmup)},
      {"median_ms", number(r.ms.median)},
      {"min_ms", number(r.ms.min)},
      {"max_ms", number(r.ms.max)},
      {"gbps", number(gbps(r))},
      {"collective_ms", number(r.collective_ms.median)},
      {"collective_min_ms", number(r.collective_ms.min)},
      {"collective_max_ms", number(r.collective_ms.max)},
      {"collective_share", number(collective_share(r))},
      {"single_gpu_ms", r.single_gpu_ms > 0 ? number(r.single_gpu_ms) : "null"},
      {"speedup_vs_single_gpu", r.single_gpu_ms > 0 ? number(speedup(r)) : "null"},
      {"result", number(r.result)},
      {"reference", number(r.reference)},
      {"abs_error", number(r.abs_error)},
      {"tolerance", number(r.tolerance)},
      {"exact_check", r.exact_check ? "true" : "false"},
      {"runs_correct", number(r.runs_correct)},
      {"runs_total", number(r.runs_total)},
      {"runs_identical", r.runs_identical ? "true" : "false"},
      {"gpus_agree", r.gpus_agree ? "true" : "false"},
      {"input_unchanged", r.input_unchanged ? "true" : "false"},
      {"passed", r.passed ? "true" : "false"},
      {"device", quoted(r.device)},
      {"cuda_runtime", quoted(cuda_version(r.cuda_runtime))},
      {"cuda_driver", quoted(cuda_version(r.cuda_driver))},
      {"nccl_version", quoted(nccl_version_string(r.nccl_version))},
  };
  std::string out = "{";
  for (std::size_t i = 0; i < f.size(); ++i) out += (i ? ", " : "") + quoted(f[i].first) + ": " + f[i].second;
  return out + "}";
}

std::string format_text(const Record& r) {
  std::ostringstream os;
  os << "14_multi_gpu (" << (r.mode == "mpi" ? "one process per GPU, MPI" : "one process, every GPU") << "): "
     << r.gpus << " x " << r.device << "; CUDA runtime " << cuda_version(r.cuda_runtime) << ", driver "
     << cuda_version(r.cuda_driver) << ", NCCL " << nccl_version_string(r.nccl_version) << "\n"
     << "  input      n = " << reduce::format_count(r.n) << " floats (" << fixed(r.n * 4.0 / 1e9, 2)
     << " GB), pattern " << reduce::to_string(r.pattern) << ", seed " << r.seed << "; shards of " << r.shard_min;
  if (r.shard_max != r.shard_min) os << " to " << r.shard_max;
  os << " floats\n"
     << "  launch     step 10 on every GPU, block " << r.block << "; ncclAllGather of the " << r.gpus
     << " partials, added in rank order on every GPU; " << r.iters << " timed runs after " << r.warmup
     << " warm-up, L2 of every GPU flushed before each\n"
     << "  result     " << number(r.result) << " vs reference " << fixed(r.reference, 4) << ": |error| " << r.abs_error
     << (r.exact_check ? " (exact check)" : " <= tolerance " + std::to_string(r.tolerance)) << "; " << r.runs_correct
     << "/" << r.runs_total << " runs correct; "
     << (r.runs_identical ? "all runs bitwise identical" : "RESULTS VARY BETWEEN RUNS") << "; "
     << (r.gpus_agree ? "every GPU holds the same bits" : "GPUS DISAGREE") << "; input "
     << (r.input_unchanged ? "unchanged" : "MODIFIED") << "\n"
     << "  time       median " << fixed(r.ms.median, 4) << " ms (min " << fixed(r.ms.min, 4) << ", max "
     << fixed(r.ms.max, 4) << "), " << fixed(gbps(r), 1) << " GB/s aggregate\n"
     << "  collective " << fixed(r.collective_ms.median, 4) << " ms alone (all-gather + add), "
     << fixed(100.0 * collective_share(r), 1) << "% of the median\n";
  if (r.single_gpu_ms > 0)
    os << "  one GPU    step 10 alone over the whole array: " << fixed(r.single_gpu_ms, 4) << " ms; speedup "
       << fixed(speedup(r), 2) << "x" << (r.single_gpu_correct ? "" : " (ITS RESULTS WERE WRONG)") << "\n";
  os << (r.passed ? "PASS" : "FAIL") << "\n";
  return os.str();
}

}  // namespace multigpu
