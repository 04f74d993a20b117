// 14_multi_gpu_reproducible: step 14's reproducible mode at several sizes and rank counts, against
// 15_reproducible's single launch (bits) and step 14's ordinary mode (time), as one markdown table.
// Usage: 14_multi_gpu_reproducible [--n 2^20,2^24+5,...] [--ranks 1,2,3,8] [--virtual | --nccl]
//                                  [--iters 20] [--warmup 3] [--pattern uniform] [--seed 1] [--write FILE]
//   --virtual (the default with fewer GPUs than the largest rank count): all ranks on GPU 0, gathered
//   by device copies; --nccl: rank r on GPU r, gathered by ncclAllGather. Exit 0: every rank count gave
//   15's bits on every rank and run; 1: one did not; 2: bad usage; 77: no GPU or too few.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "device.cuh"
#include "harness.cuh"
#include "input.hpp"
#include "multi_gpu.hpp"
#include "reproducible.cuh"
#include "team.cuh"
#include "../15_reproducible/bits.hpp"
#include "../15_reproducible/reproducible.cuh"

namespace {

const char* kUsage =
    "usage: 14_multi_gpu_reproducible [--n LIST] [--ranks LIST] [--virtual | --nccl] [--iters K] [--warmup W]\n"
    "                                 [--pattern P] [--seed S] [--write FILE]\n"
    "  Sums n floats with step 14's reproducible mode on each rank count and prints one markdown row per\n"
    "  (n, ranks): the result's bits, whether they equal 15_reproducible's single launch, and the median time\n"
    "  against step 14's ordinary mode (step 10 per GPU, partials added in rank order) on as many GPUs.\n"
    "  --n LIST      sizes, comma-separated, each a count or 2^k[+/-c] (default 2^20,2^24+5,2^26,2^28+3)\n"
    "  --ranks LIST  rank counts, comma-separated, 1 to 1024 (default 1,2,3,8)\n"
    "  --virtual     all ranks on GPU 0, gathered by device copies (default when fewer GPUs than ranks)\n"
    "  --nccl        rank r on GPU r, gathered through NCCL (needs as many GPUs as the largest rank count)\n"
    "  --iters K     timed runs per row (default 20), --warmup W untimed runs first (default 3)\n"
    "  --pattern P   constant, int, uniform, mixed (default uniform); --seed S (default 1)\n"
    "  --write FILE  also write the table to FILE (written to FILE.tmp, then renamed)\n";

struct Args {
  std::vector<std::int64_t> sizes;
  std::vector<int> ranks{1, 2, 3, 8};
  int mode = 0;  // 0: choose, 1: virtual, 2: nccl
  int iters = 20, warmup = 3;
  reduce::Pattern pattern = reduce::Pattern::uniform;
  std::uint64_t seed = 1;
  std::string write;
  bool help = false;
  std::string command;  // for the table's header, without the program's path
};

// "2^24+5", "2^20", "1000003"
std::int64_t parse_size(const std::string& text) {
  std::int64_t v = -1;
  char* end = nullptr;
  if (text.rfind("2^", 0) == 0) {
    const long k = std::strtol(text.c_str() + 2, &end, 10);
    if (end != text.c_str() + 2 && k >= 0 && k <= 36) {
      v = std::int64_t{1} << k;
      if (*end == '+' || *end == '-') {
        const char sign = *end;
        const char* rest = end + 1;
        const long long c = std::strtoll(rest, &end, 10);
        if (end == rest || c < 0) v = -1;
        else v = sign == '+' ? v + c : v - c;
      }
    }
  } else if (!text.empty()) {
    v = std::strtoll(text.c_str(), &end, 10);
  }
  if (v < 0 || !end || *end || v > reduce::max_n())
    throw reduce::UsageError("--n takes counts from 0 to 2^36 (e.g. 1000003 or 2^24+5), not '" + text + "'");
  return v;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  a.command = "14_multi_gpu_reproducible";
  for (int i = 1; i < argc; ++i) {
    const std::string o = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw reduce::UsageError(o + " needs a value");
      return argv[++i];
    };
    auto number = [&](long lo, long hi) {
      const std::string v = value();
      char* end = nullptr;
      const long x = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || x < lo || x > hi)
        throw reduce::UsageError(o + " takes a number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", not '" + v + "'");
      return x;
    };
    if (o == "--help" || o == "-h") a.help = true;
    else if (o == "--virtual") a.mode = 1;
    else if (o == "--nccl") a.mode = 2;
    else if (o == "--n") {
      a.sizes.clear();
      for (const auto& s : split(value())) a.sizes.push_back(parse_size(s));
      if (a.sizes.empty()) throw reduce::UsageError("--n needs at least one size");
    } else if (o == "--ranks") {
      a.ranks.clear();
      for (const auto& s : split(value())) {
        char* end = nullptr;
        const long r = std::strtol(s.c_str(), &end, 10);
        if (s.empty() || *end || r < 1 || r > multigpu::kMaxGpus)
          throw reduce::UsageError("--ranks takes rank counts from 1 to 1024, not '" + s + "'");
        a.ranks.push_back(static_cast<int>(r));
      }
      if (a.ranks.empty()) throw reduce::UsageError("--ranks needs at least one rank count");
    } else if (o == "--iters") a.iters = static_cast<int>(number(1, 100000));
    else if (o == "--warmup") a.warmup = static_cast<int>(number(0, 100000));
    else if (o == "--seed") a.seed = static_cast<std::uint64_t>(number(0, 2147483647));
    else if (o == "--pattern") {
      const std::string p = value();
      if (p == "constant") a.pattern = reduce::Pattern::constant;
      else if (p == "int") a.pattern = reduce::Pattern::integers;
      else if (p == "uniform") a.pattern = reduce::Pattern::uniform;
      else if (p == "mixed") a.pattern = reduce::Pattern::mixed;
      else throw reduce::UsageError("--pattern takes constant, int, uniform or mixed, not '" + p + "'");
    } else if (o == "--write") {
      a.write = value();
      continue;  // the file is not part of the command the table names
    } else throw reduce::UsageError("unknown option " + o);
    a.command += " " + o;
    if (o != "--help" && o != "-h" && o != "--virtual" && o != "--nccl") a.command += std::string(" ") + argv[i];
  }
  if (a.sizes.empty())
    for (const char* s : {"2^20", "2^24+5", "2^26", "2^28+3"}) a.sizes.push_back(parse_size(s));
  return a;
}

std::string fixed(double v, int digits) {
  char t[32];
  std::snprintf(t, sizeof t, "%.*f", digits, v);
  return t;
}

std::string size_text(std::int64_t n) {
  for (int k = 36; k >= 0; --k) {
    const std::int64_t p = std::int64_t{1} << k;
    if (n == p) return "2^" + std::to_string(k);
    if (n > p && n - p < 1000) return "2^" + std::to_string(k) + "+" + std::to_string(n - p);
    if (p > n && p - n < 1000 && k > 10) return "2^" + std::to_string(k) + "-" + std::to_string(p - n);
  }
  return std::to_string(n);
}

int run(int argc, char** argv) {
  const Args a = parse(argc, argv);
  if (a.help) {
    std::cout << kUsage;
    return 0;
  }
  const reduce::DeviceInfo device = reduce::open_device(0);
  int gpus = 0;
  CUDA_CHECK(cudaGetDeviceCount(&gpus));
  int most = 1;
  for (int r : a.ranks) most = std::max(most, r);
  const bool virtual_ranks = a.mode == 1 || (a.mode == 0 && gpus < most);
  if (!virtual_ranks && gpus < most)
    throw reduce::NoUsableDevice("--nccl with " + std::to_string(most) + " ranks needs " + std::to_string(most) +
                                 " GPUs, this machine shows " + std::to_string(gpus));

  const std::time_t now = std::time(nullptr);
  char date[16];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::ostringstream table;
  table << "Step 14's reproducible mode on " << device.name << " (" << device.sm_count << " SMs), " << date << ": "
        << (virtual_ranks ? "N virtual ranks on one GPU (own streams and buffers, the tile sums gathered by device copies)"
                          : "one rank per GPU, the tile sums gathered by ncclAllGather")
        << "; floats of pattern " << reduce::to_string(a.pattern) << ", seed " << a.seed
        << ". \"15's bits\" is 15_reproducible's single launch on one GPU. Times are medians of " << a.iters
        << " runs, L2 flushed before each; step 14's ordinary mode (step 10 per GPU, the partials added in rank order) on "
        << (virtual_ranks ? "one GPU" : "as many GPUs as ranks") << ". Generated by `" << a.command << "`.\n\n"
        << "| n | ranks | tiles (per rank) | result bits | 15's bits | same | reproducible ms | 14 ordinary ms | ordinary / reproducible |\n"
        << "|---|---:|---|---|---|---|---:|---:|---:|\n";
  bool all_same = true;
  for (std::int64_t n : a.sizes) {
    std::vector<float> host(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
    reduce::fill_input(host.data(), n, a.pattern, a.seed);
    float single = 0.0f;
    {
      reduce::ensure_device_memory(n * sizeof(float) + (std::size_t{256} << 20));
      reduce::DeviceBuffer<float> in(static_cast<std::size_t>(n));
      if (n > 0) CUDA_CHECK(cudaMemcpy(in.get(), host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
      reduce::Stream stream;
      const reduce::LaunchConfig cfg{repro::kStep.default_block, 0, device.sm_count};
      single = reduce::reduce_once(repro::kStep, in.get(), n, cfg, stream.get());
    }
    double ordinary_one = -1.0;  // virtual ranks: 14's ordinary mode on one GPU, once per n
    for (int ranks : a.ranks) {
      const multigpu::ReproducibleResult res =
          multigpu::reproducible_sum(host.data(), n, ranks, virtual_ranks, a.warmup, a.iters, repro::kStep.default_block);
      double ordinary = ordinary_one;
      if (!virtual_ranks || ordinary_one < 0) {
        multigpu::Team team = multigpu::Team::all_local(virtual_ranks ? 1 : ranks, multigpu::shard_step_default_block());
        team.load(n, a.pattern, a.seed);
        ordinary = reduce::summarize(team.run(a.warmup, a.iters).ms).median;
        if (virtual_ranks) ordinary_one = ordinary;
      }
      const float got = res.results.empty() ? 0.0f : res.results.back();
      const bool same = res.ranks_agree && res.runs_identical && repro::bits_text(got) == repro::bits_text(single);
      all_same = all_same && same;
      table << "| " << size_text(n) << " | " << ranks << " | " << res.tiles << " (" << res.tiles_per_rank << ") | "
            << repro::bits_text(got) << " | " << repro::bits_text(single) << " | " << (same ? "yes" : "NO") << " | "
            << fixed(res.summary.median, 4) << " | " << fixed(ordinary, 4) << " | "
            << fixed(res.summary.median > 0 ? ordinary / res.summary.median : 0.0, 3) << "x |\n";
      std::cerr << "n=" << n << " ranks=" << ranks << (same ? " same bits" : " DIFFERENT bits") << "\n";
    }
  }
  std::cout << table.str();
  if (!a.write.empty()) {
    const std::string tmp = a.write + ".tmp";
    {
      std::ofstream out(tmp);
      out << table.str();
      if (!out) throw reduce::UsageError("--write: cannot write " + tmp);
    }
    if (std::rename(tmp.c_str(), a.write.c_str()) != 0) throw reduce::UsageError("--write: cannot rename " + tmp + " to " + a.write);
  }
  if (!all_same) std::cerr << "14_multi_gpu_reproducible: a rank count did not give 15_reproducible's bits\n";
  return all_same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t n = 0;
  return reduce::guarded_main("14_multi_gpu_reproducible", n, [&] { return run(argc, argv); });
}
