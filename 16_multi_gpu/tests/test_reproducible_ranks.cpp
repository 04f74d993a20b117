// Step 16's two modes with the same bits for any number of ranks (ranks.cuh). On one GPU, 1 ... 8
// virtual ranks (own streams and buffers, joined by device copies) give the single launch's bits, on
// every rank and every run: --reproducible 14_reproducible's, --exact 15_exact's (and the exact CPU
// sum's). Fixed cases first (sizes that are not multiples of N or of the tile, fewer tiles or elements
// than ranks, every input pattern), then properties over random n, rank count, grid and block. On two
// or more GPUs the same through NCCL. Skips without a GPU; the NCCL test skips, with the reason, on one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "14_reproducible/bits.hpp"          // 14_reproducible_host
#include "14_reproducible/reproducible.cuh"  // 14_reproducible_kernel
#include "15_exact/exact_acc.hpp"            // 15_exact: the accumulator on the CPU, the oracle of the exact mode
#include "16_multi_gpu/ranks.cuh"
#include "input.hpp"
#include "tests/gpu_test_util.hpp"
#include "tests/property.hpp"

namespace {

using step16::Sum;

const char* name_of(Sum sum) { return sum == Sum::exact ? "exact" : "reproducible"; }

// The exact sum rounded once, on the CPU (15_exact's accumulator, one float at a time).
float cpu_exact(const std::vector<float>& x, std::int64_t n) {
  step15::Acc a{};
  for (std::int64_t i = 0; i < n; ++i) step15::add(a, x[i]);
  return step15::rounded(a);
}

// The mode's step launched once over host[0..n) with block and grid into *out: what every rank count
// must give. Returns "", or why not where it differs from its CPU oracle (14's model of the order, the
// exact CPU sum).
std::string single(Sum sum, const std::vector<float>& host, std::int64_t n, float* out, int block = 512,
                   std::int64_t grid = 0) {
  *out = step16::single_launch(sum, host.data(), n, 0, block, grid);
  const float oracle = sum == Sum::exact ? cpu_exact(host, n) : step14::model_sum(host.data(), n);
  if (step14::bits_text(*out) == step14::bits_text(oracle)) return "";
  return "the single launch gives " + step14::bits_text(*out) + ", the CPU " + step14::bits_text(oracle);
}

// "" when every run on every rank of `team` gives want's bits for host[0..n), else what differed.
std::string team_gives(step16::ReproducibleTeam& team, const std::vector<float>& host, std::int64_t n, float want) {
  std::ostringstream why;
  team.load(host.data(), n);
  const step16::ReproducibleResult res = team.run(1, 2);
  if (res.results.size() != 3) why << res.results.size() << " results for 3 runs; ";
  for (float v : res.results)
    if (step14::bits_text(v) != step14::bits_text(want)) {
      why << "bits " << step14::bits_text(v) << " (" << v << "), the single launch's " << step14::bits_text(want)
          << " (" << want << "); ";
      break;
    }
  if (!res.ranks_agree) why << "the ranks hold different totals; ";
  if (!team.input_unchanged(host.data())) why << "a shard changed; ";
  return why.str();
}

std::vector<float> input(std::int64_t n, reduce::Pattern p, std::uint64_t seed) {
  std::vector<float> host(static_cast<std::size_t>(n > 0 ? n : 1));
  reduce::fill_input(host.data(), n, p, seed);
  return host;
}

// 1 tile (n < N), tiles of 8192 cut short, 2^24 + 5 (tiles of 2^15, 513 of them), 3 x 2^22 + 7.
const std::int64_t kSizes[] = {0, 1, 5, 513, 4097, 100003, (1 << 20) + 3, (1 << 24) + 5, 3 * (1 << 22) + 7};

void one_to_eight_virtual_ranks(Sum sum, const std::vector<reduce::Pattern>& patterns) {
  std::vector<step16::ReproducibleTeam> teams;
  for (int ranks = 1; ranks <= 8; ++ranks) teams.push_back(step16::ReproducibleTeam::virtual_ranks(sum, 0, ranks, 512));
  for (std::int64_t n : kSizes)
    for (reduce::Pattern p : patterns) {
      const std::vector<float> host = input(n, p, 3);
      float want = 0.0f;
      ASSERT_EQ(single(sum, host, n, &want), "") << name_of(sum) << ", n=" << n << " " << reduce::to_string(p);
      for (step16::ReproducibleTeam& team : teams)
        EXPECT_EQ(team_gives(team, host, n, want), "")
            << name_of(sum) << ", " << team.ranks() << " virtual ranks, n=" << n << " " << reduce::to_string(p);
    }
}

TEST(ReproducibleRanks, OneToEightVirtualRanksGiveTheSingleLaunchsBits) {
  SKIP_WITHOUT_GPU();
  one_to_eight_virtual_ranks(Sum::order, {reduce::Pattern::mixed, reduce::Pattern::uniform});
}

TEST(ExactRanks, OneToEightVirtualRanksGiveTheSingleLaunchsBits) {
  SKIP_WITHOUT_GPU();
  using P = reduce::Pattern;
  one_to_eight_virtual_ranks(Sum::exact, {P::mixed, P::uniform, P::integers, P::nan, P::inf, P::ties, P::limits});
}

// The shards are cut on tile boundaries of the global n, and cover every tile once.
TEST(ReproducibleRanks, ShardsCoverTheTilesInOrder) {
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{4097}, (std::int64_t{1} << 24) + 5,
                         (std::int64_t{1} << 33) + 3}) {
    for (int ranks = 1; ranks <= 9; ++ranks) {
      std::int64_t next = 0, elements = 0;
      for (int r = 0; r < ranks; ++r) {
        const step14::TileRange t = step14::shard_tiles(n, ranks, r);
        EXPECT_EQ(t.first, next) << "n=" << n << " ranks=" << ranks << " rank=" << r;
        EXPECT_LE(t.count, t.per);
        if (t.count > 0) {
          EXPECT_EQ(step14::shard_begin(n, t) % step14::tile_elements(n), 0);
        }
        next += t.count;
        elements += step14::shard_elements(n, t);
      }
      EXPECT_EQ(next, step14::num_tiles(n));
      EXPECT_EQ(elements, n);
    }
  }
}

// --- Properties: random n, rank count, grid and block -------------------------------------------

// One case: n floats of a pattern (or of random bits over the whole exponent range with cancelling
// pairs, pattern unset), summed by `ranks` virtual ranks launched with (block, grid), against the single
// launch with its own (single_block, single_grid). grid 0: the step's own choice.
struct Case {
  std::int64_t n = 0;
  std::optional<reduce::Pattern> pattern;
  std::uint64_t seed = 0;
  int ranks = 1, block = 512, single_block = 512;
  std::int64_t grid = 0, single_grid = 0;
};

std::string show(const Case& c) {
  std::ostringstream s;
  s << "n=" << c.n << " pattern=" << (c.pattern ? reduce::to_string(*c.pattern) : std::string("wide"))
    << " seed=" << c.seed << " ranks=" << c.ranks << " block=" << c.block << " grid=" << c.grid
    << " (single launch: block=" << c.single_block << " grid=" << c.single_grid << ")";
  return s.str();
}

// Any finite float: random sign, exponent and significand, and every third one the negation of an
// earlier one, so that large terms cancel and the small ones decide the result.
std::vector<float> wide_input(std::int64_t n, std::uint64_t seed) {
  prop::Rng rng(seed);
  std::vector<float> x(static_cast<std::size_t>(n > 0 ? n : 1));
  for (std::int64_t i = 0; i < n; ++i) {
    if (i % 3 == 2) {
      x[i] = -x[prop::uniform(rng, 0, i - 1)];
      continue;
    }
    const std::uint32_t bits =
        static_cast<std::uint32_t>(prop::uniform(rng, 0, 0xffffffffLL)) & 0xff7fffffu;  // no NaN, inf
    std::memcpy(&x[i], &bits, sizeof bits);
  }
  return x;
}

Case random_case(prop::Rng& rng) {
  Case c;
  const int log2 = static_cast<int>(prop::uniform(rng, 0, 22));
  c.n =
      log2 == 0 ? prop::uniform(rng, 0, 8) : prop::uniform(rng, (std::int64_t{1} << log2) / 2, std::int64_t{1} << log2);
  using P = reduce::Pattern;
  const std::vector<std::optional<P>> patterns = {std::nullopt, P::mixed, P::uniform, P::integers, P::ties, P::limits};
  c.pattern = prop::pick(rng, patterns);
  c.seed = static_cast<std::uint64_t>(prop::uniform(rng, 1, 1 << 30));
  c.ranks = static_cast<int>(prop::uniform(rng, 1, 8));
  const std::vector<int> blocks = {32, 64, 128, 256, 512, 1024};
  c.block = prop::pick(rng, blocks);
  c.single_block = prop::pick(rng, blocks);
  c.grid = prop::uniform(rng, 0, 1) ? 0 : prop::uniform(rng, 1, 600);
  c.single_grid = prop::uniform(rng, 0, 1) ? 0 : prop::uniform(rng, 1, 600);
  return c;
}

std::vector<Case> smaller(const Case& c) {
  std::vector<Case> out;
  auto with = [&](auto change) {
    Case d = c;
    change(d);
    out.push_back(d);
  };
  if (c.n > 0) with([](Case& d) { d.n /= 2; });
  if (c.n > 0) with([](Case& d) { d.n -= 1; });
  if (c.ranks > 1) with([](Case& d) { d.ranks -= 1; });
  if (c.grid != 0 || c.single_grid != 0) with([](Case& d) { d.grid = d.single_grid = 0; });
  if (c.block != 512 || c.single_block != 512) with([](Case& d) { d.block = d.single_block = 512; });
  return out;
}

std::string verify(Sum sum, const Case& c) {
  const std::vector<float> host = c.pattern ? input(c.n, *c.pattern, c.seed) : wide_input(c.n, c.seed);
  float want = 0.0f;
  if (std::string why = single(sum, host, c.n, &want, c.single_block, c.single_grid); !why.empty()) return why;
  step16::ReproducibleTeam team = step16::ReproducibleTeam::virtual_ranks(sum, 0, c.ranks, c.block, c.grid);
  return team_gives(team, host, c.n, want);
}

TEST(RanksProperty, ExactModeGivesTheSingleLaunchsBits) {
  SKIP_WITHOUT_GPU();
  prop::check<Case>(
      "exact_virtual_ranks", 200, random_case, [](const Case& c) { return verify(Sum::exact, c); }, smaller, show);
}

TEST(RanksProperty, ReproducibleModeGivesTheSingleLaunchsBits) {
  SKIP_WITHOUT_GPU();
  prop::check<Case>(
      "reproducible_virtual_ranks", 200, random_case, [](const Case& c) { return verify(Sum::order, c); }, smaller,
      show);
}

// --- Real GPUs: one rank per GPU through NCCL ----------------------------------------------------

TEST(RealRanks, EveryGpuCountGivesTheSingleLaunchsBits) {
  SKIP_WITHOUT_GPU();
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  if (count < 2) GTEST_SKIP() << "needs 2 GPUs, this machine shows " << count;
  for (Sum sum : {Sum::exact, Sum::order})
    for (int gpus = 2; gpus <= std::min(count, 8); ++gpus) {
      step16::ReproducibleTeam team = step16::ReproducibleTeam::nccl_ranks(sum, gpus, 512);
      for (std::int64_t n : {std::int64_t{1}, std::int64_t{4097}, std::int64_t{(1 << 24) + 5}})
        for (reduce::Pattern p : {reduce::Pattern::mixed, reduce::Pattern::limits}) {
          const std::vector<float> host = input(n, p, 11);
          float want = 0.0f;
          ASSERT_EQ(single(sum, host, n, &want), "") << name_of(sum) << ", n=" << n << " " << reduce::to_string(p);
          EXPECT_EQ(team_gives(team, host, n, want), "")
              << name_of(sum) << ", " << gpus << " GPUs, n=" << n << " " << reduce::to_string(p);
        }
    }
}

}  // namespace
