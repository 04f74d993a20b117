// Step 15 on the GPU against the CPU's exact sum (common/exact_sum.hpp), bit for bit: every input class
// (random over the whole exponent range, cancellation, ties, subnormals, overflow, NaN and infinities,
// values just inside and outside a thread's band) over the suite's size matrix and every misalignment;
// every block size and grids from 1 to past the device's worth; accumulate() giving the Acc word for word
// and shards' Accs adding up (16's exact mode); the contract (input unchanged, scratch left zero, one
// scratch for every size); n > 2^32; and a property over random sizes, values, grids, blocks and
// misalignments. Every test skips, with the reason, where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "15_exact/exact.cuh"
#include "device.cuh"
#include "exact_sum.hpp"
#include "harness.cuh"
#include "input.hpp"
#include "tests/gpu_test_util.hpp"
#include "tests/property.hpp"

namespace {

constexpr float kMax = std::numeric_limits<float>::max(), kTiny = std::numeric_limits<float>::denorm_min();
constexpr float kInf = std::numeric_limits<float>::infinity(), kNan = std::numeric_limits<float>::quiet_NaN();

std::uint32_t bits(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
float want(const std::vector<float>& x) {
  return reduce::exact_sum(x.data(), static_cast<std::int64_t>(x.size())).to_float();
}
step15::Acc host_acc(const float* x, std::int64_t n) {
  step15::Acc a{};
  for (std::int64_t i = 0; i < n; ++i) step15::add(a, x[i]);
  step15::normalize(a);
  return a;
}
bool same_acc(const step15::Acc& a, const step15::Acc& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

int sm_count() {
  int sms = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  return sms;
}
reduce::LaunchConfig config(int block = 512, std::int64_t grid = 0) {
  static const int sms = sm_count();
  return reduce::LaunchConfig{block, 0, sms, grid};
}

// x on the device `misalign` floats past a 16-byte boundary, with zeroed scratch, and the results.
struct OnDevice {
  OnDevice(const std::vector<float>& x, int misalign = 0)
      : n(static_cast<std::int64_t>(x.size())), buf(x.size() + 4), scratch(256), out(1), acc(1) {
    in = buf.get() + misalign;
    EXPECT_EQ(cudaMemcpy(in, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemset(scratch.get(), 0, scratch.bytes()), cudaSuccess);
    EXPECT_GE(scratch.bytes(), step15::scratch_bytes(n, config()));
  }
  float sum(const reduce::LaunchConfig& cfg) {
    EXPECT_EQ(step15::launch(in, n, out.get(), reduce::view(scratch), cfg, nullptr), cudaSuccess);
    float r = 0.0f;
    EXPECT_EQ(cudaMemcpy(&r, out.get(), sizeof r, cudaMemcpyDeviceToHost), cudaSuccess);
    return r;
  }
  step15::Acc accumulate(const reduce::LaunchConfig& cfg, std::int64_t first = 0, std::int64_t count = -1) {
    EXPECT_EQ(step15::accumulate(in + first, count < 0 ? n : count, acc.get(), reduce::view(scratch), cfg, nullptr),
              cudaSuccess);
    step15::Acc a;
    EXPECT_EQ(cudaMemcpy(&a, acc.get(), sizeof a, cudaMemcpyDeviceToHost), cudaSuccess);
    return a;
  }
  bool scratch_zero() const {
    std::vector<unsigned char> s(scratch.bytes());
    EXPECT_EQ(cudaMemcpy(s.data(), scratch.get(), s.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return c == 0; });
  }
  std::int64_t n;
  reduce::DeviceBuffer<float> buf;
  float* in = nullptr;
  reduce::DeviceBuffer<unsigned char> scratch;
  reduce::DeviceBuffer<float> out;
  reduce::DeviceBuffer<step15::Acc> acc;
};

// The input classes. Each is a function of (n, seed) whose first k values do not depend on n.
enum class Kind { uniform, mixed, whole_range, cancelling, subnormal, band_edges, ones_and_halves, specials };
const Kind kKinds[] = {Kind::uniform,   Kind::mixed,      Kind::whole_range,     Kind::cancelling,
                       Kind::subnormal, Kind::band_edges, Kind::ones_and_halves, Kind::specials};
const char* name_of(Kind k) {
  const char* names[] = {"uniform",   "mixed",      "whole_range",     "cancelling",
                         "subnormal", "band_edges", "ones_and_halves", "specials"};
  return names[static_cast<int>(k)];
}
float random_float(std::mt19937_64& g, int lo_exp, int hi_exp) {
  const float m = static_cast<float>(g() & 0xffffff);
  const int e = lo_exp + static_cast<int>(g() % static_cast<unsigned>(hi_exp - lo_exp + 1));
  return std::ldexp(g() & 1 ? -m : m, e);
}
std::vector<float> make(Kind k, std::int64_t n, std::uint64_t seed = 1) {
  std::mt19937_64 g(seed);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    float& v = x[static_cast<std::size_t>(i)];
    switch (k) {
      case Kind::uniform:
        v = static_cast<float>(g() & 0xffffff) * 0x1p-24f;
        break;
      case Kind::mixed:
        v = static_cast<float>(static_cast<std::int64_t>(g() & 0x1ffffff) - 0x1000000) * 0x1p-24f;
        break;
      case Kind::whole_range:
        v = random_float(g, -149, 104);
        break;
      case Kind::cancelling:
        v = i % 2 ? -x[static_cast<std::size_t>(i - 1)] : random_float(g, -60, 100);
        break;
      case Kind::subnormal:
        v = random_float(g, -149, -140);
        break;
      // Mostly one exponent, and now and then one 17 to 20 binades below: just inside or outside a band.
      case Kind::band_edges:
        v = g() % 64 ? random_float(g, 0, 0) : random_float(g, -20, -17);
        break;
      case Kind::ones_and_halves:
        v = i % 2 ? 0x1p-24f : 1.0f;
        break;
      case Kind::specials: {
        const float s[] = {kMax, -kMax, 1e38f, -1e38f, kTiny, 1.0f, -0.0f, 0x1p-24f};
        v = s[g() % 8];
        break;
      }
    }
  }
  if (k == Kind::cancelling && n > 0) x[static_cast<std::size_t>(n / 2)] += 0x1p-120f;  // the last bit decides
  return x;
}

std::vector<std::int64_t> sizes() {
  return {0,    1,    2,    3,    4,    5,    31,    32,    33,    255,     256,          257,
          1023, 1024, 1025, 4093, 8191, 8193, 65521, 65535, 65537, 1000003, (1 << 22) + 3};
}

TEST(Exact, EveryClassEverySizeEveryMisalignment) {
  SKIP_WITHOUT_GPU();
  for (Kind k : kKinds)
    for (std::int64_t n : sizes()) {
      const std::vector<float> x = make(k, n);
      const float w = want(x);
      for (int mis = 0; mis < 4; ++mis) {
        OnDevice run(x, mis);
        EXPECT_EQ(bits(run.sum(config())), bits(w)) << name_of(k) << " n=" << n << " misalign=" << mis;
        EXPECT_TRUE(run.scratch_zero()) << name_of(k) << " n=" << n;
      }
    }
}

TEST(Exact, LargerThanL2) {
  SKIP_WITHOUT_GPU();
  for (Kind k : {Kind::mixed, Kind::whole_range}) {
    const std::vector<float> x = make(k, (std::int64_t{1} << 25) + 7, 3);
    OnDevice run(x, 1);
    EXPECT_EQ(bits(run.sum(config())), bits(want(x))) << name_of(k);
  }
}

TEST(Exact, CancellationTiesRangeAndSpecialValues) {
  SKIP_WITHOUT_GPU();
  const std::int64_t n = 1000003;
  auto with = [&](std::vector<std::pair<std::int64_t, float>> at) {
    std::vector<float> x(n, 0.0f);
    for (auto [i, v] : at) x[static_cast<std::size_t>(i)] = v;
    return x;
  };
  const std::vector<std::vector<float>> cases = {
      with({{0, 1e38f}, {n / 2, 1.0f}, {n - 1, -1e38f}}),    // far apart: different blocks
      with({{1, kMax}, {n - 2, kMax}}),                      // beyond the range: +inf
      with({{1, kMax}, {7, kMax}, {n - 2, -kMax}}),          // back in range
      with({{0, kMax}, {n - 1, 0x1p103f}}),                  // a tie at the top: +inf
      with({{3, -kMax}, {n - 3, -0x1p102f}}),                // just below it: -kMax
      with({{0, 1.0f}, {n - 1, 0x1p-24f}}),                  // a tie: even, 1
      with({{0, 1.0f}, {n / 3, 0x1p-24f}, {n - 1, kTiny}}),  // broken by 2^-149
      with({{5, kNan}}),
      with({{0, kInf}, {n - 1, -kInf}}),
      with({{n - 1, kInf}, {3, kMax}}),
      with({{n - 1, -kInf}, {0, 1.0f}}),
      with({{2, kTiny}, {n - 4, kTiny}}),
      with({{0, -0.0f}, {n - 1, -0.0f}}),
  };
  for (std::size_t c = 0; c < cases.size(); ++c)
    for (int mis : {0, 3}) {
      OnDevice run(cases[c], mis);
      for (std::int64_t grid : {std::int64_t{0}, std::int64_t{1}, std::int64_t{1000}})
        EXPECT_EQ(bits(run.sum(config(256, grid))), bits(want(cases[c])))
            << "case " << c << " misalign " << mis << " grid " << grid;
    }
  // A tie made of 2^20 pieces spread over the whole array: 1 + 2^20 * 2^-44 = 1 + 2^-24.
  std::vector<float> x(1 << 21, 0.0f);
  for (std::size_t i = 0; i < x.size(); i += 2) x[i] = 0x1p-44f;
  x[12345] = 1.0f;
  OnDevice run(x, 2);
  EXPECT_EQ(run.sum(config()), 1.0f);
  x[777] = kTiny;  // and one more bit far below: up
  OnDevice up(x, 2);
  EXPECT_EQ(up.sum(config()), 1.0f + 0x1p-23f);
}

TEST(Exact, EveryBlockAndGridGivesTheSameBits) {
  SKIP_WITHOUT_GPU();
  const int sms = sm_count();
  for (Kind k : {Kind::whole_range, Kind::cancelling, Kind::band_edges}) {
    const std::vector<float> x = make(k, 3000017, 5);
    const float w = want(x);
    OnDevice run(x, 1);
    for (int block : {32, 64, 128, 256, 512, 1024})
      for (std::int64_t grid : {std::int64_t{0}, std::int64_t{1}, std::int64_t{2}, std::int64_t{7}, std::int64_t{sms},
                                std::int64_t{4} * sms, std::int64_t{1} << 20})
        EXPECT_EQ(bits(run.sum(config(block, grid))), bits(w)) << name_of(k) << " block " << block << " grid " << grid;
    EXPECT_TRUE(run.scratch_zero());
  }
}

// One block of 32 threads turns 2^15 times: its shared limbs are normalized on the way.
TEST(Exact, OneSmallBlockOverManyRounds) {
  SKIP_WITHOUT_GPU();
  const std::vector<float> x = make(Kind::specials, (std::int64_t{1} << 24) + 9, 11);
  OnDevice run(x, 3);
  EXPECT_EQ(bits(run.sum(config(32, 1))), bits(want(x)));
}

TEST(Accumulate, TheAccWordForWordAndShardsAddUp) {
  SKIP_WITHOUT_GPU();
  for (Kind k : {Kind::whole_range, Kind::specials, Kind::cancelling}) {
    const std::vector<float> x = make(k, 1000003, 9);
    OnDevice run(x, 1);
    const step15::Acc whole = run.accumulate(config());
    EXPECT_TRUE(same_acc(whole, host_acc(x.data(), run.n))) << name_of(k);
    EXPECT_EQ(bits(step15::rounded(whole)), bits(want(x))) << name_of(k);
    // Shards of uneven, unaligned lengths on "ranks" with different launches, added word by word.
    const std::int64_t cuts[] = {0, 1, 4099, 500001, 999999, run.n};
    step15::Acc total{};
    for (int s = 0; s + 1 < 6; ++s) {
      const step15::Acc part = run.accumulate(config(32 << s, s), cuts[s], cuts[s + 1] - cuts[s]);
      for (int w = 0; w < step15::kAccWords; ++w)
        reinterpret_cast<long long*>(&total)[w] += reinterpret_cast<const long long*>(&part)[w];
    }
    step15::normalize(total);
    EXPECT_TRUE(same_acc(total, whole)) << name_of(k);
    // round_to_float on the device rounds the carry-save total the same way.
    reduce::DeviceBuffer<step15::Acc> d(1);
    reduce::DeviceBuffer<float> out(1);
    ASSERT_EQ(cudaMemcpy(d.get(), &total, sizeof total, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(step15::round_to_float(d.get(), out.get(), nullptr), cudaSuccess);
    float r = 0.0f;
    ASSERT_EQ(cudaMemcpy(&r, out.get(), sizeof r, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(bits(r), bits(want(x))) << name_of(k);
    EXPECT_TRUE(run.scratch_zero());
  }
}

TEST(Contract, InputUnchangedOneScratchForEverySizeEmptyIsPlusZero) {
  SKIP_WITHOUT_GPU();
  const std::vector<float> x = make(Kind::whole_range, 65537, 13);
  OnDevice run(x, 0);
  for (std::int64_t n :
       {std::int64_t{65537}, std::int64_t{0}, std::int64_t{3}, std::int64_t{40000}, std::int64_t{65537}}) {
    run.n = n;
    const float r = run.sum(config());
    EXPECT_EQ(bits(r), bits(want(std::vector<float>(x.begin(), x.begin() + n)))) << "n=" << n;
  }
  std::vector<float> back(x.size());
  ASSERT_EQ(cudaMemcpy(back.data(), run.in, back.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(std::memcmp(back.data(), x.data(), x.size() * sizeof(float)), 0);
  EXPECT_TRUE(run.scratch_zero());
  EXPECT_EQ(step15::kStep.deterministic, true);
  EXPECT_EQ(step15::kStep.needs_zeroed_scratch, true);
}

// Property: random sizes (up to 2^22), values from every class mixed, grids, blocks and misalignments.
struct Case {
  std::int64_t n = 0;
  std::uint64_t seed = 0;
  int block = 512, misalign = 0;
  std::int64_t grid = 0;
};
std::vector<float> values_of(const Case& c) {
  std::mt19937_64 g(c.seed);
  std::vector<float> x(static_cast<std::size_t>(c.n));
  const int lo = static_cast<int>(g() % 254) - 149, width = 1 + static_cast<int>(g() % 60);  // a band of exponents
  for (float& v : x) {
    const unsigned r = g() % 1000;
    v = r < 990    ? random_float(g, lo, std::min(lo + width, 104))
        : r < 998  ? random_float(g, -149, 104)
        : r == 998 ? (g() & 1 ? kInf : -kInf)
                   : kNan;
    if (r >= 998 && g() % 8) v = 0.0f;  // specials rarely
  }
  return x;
}
// The properties' shared parts: a random case, the check of x's bits (and the scratch left zero), the
// smaller cases to shrink to, and the line that replays a case.
Case random_case(prop::Rng& rng, int sms) {
  Case c;
  c.n = static_cast<std::int64_t>(std::exp2(std::uniform_real_distribution<double>(0.0, 22.0)(rng))) - 1;
  c.seed = rng();
  c.block = 32 << prop::uniform(rng, 0, 5);
  c.misalign = static_cast<int>(prop::uniform(rng, 0, 3));
  const auto g = prop::uniform(rng, 0, 3);  // the device's grid, one block (the bins empty many times), or any
  c.grid = g == 0 ? 0 : g == 1 ? 1 : prop::uniform(rng, 1, 4 * sms);
  return c;
}
std::string exact_bits_failure(const std::vector<float>& x, const Case& c) {
  OnDevice run(x, c.misalign);
  const float r = run.sum(config(c.block, c.grid)), w = want(x);
  if (bits(r) != bits(w)) return "bits " + std::to_string(bits(r)) + ", the exact sum's " + std::to_string(bits(w));
  if (!run.scratch_zero()) return "the scratch was not left zero";
  return "";
}
std::vector<Case> smaller_cases(const Case& c) {
  std::vector<Case> s;
  for (Case d : {Case{c.n / 2, c.seed, c.block, c.misalign, c.grid}, Case{c.n - 1, c.seed, c.block, c.misalign, c.grid},
                 Case{c.n, c.seed, 512, c.misalign, c.grid}, Case{c.n, c.seed, c.block, 0, c.grid},
                 Case{c.n, c.seed, c.block, c.misalign, 0}})
    if (d.n >= 0 && (d.n != c.n || d.block != c.block || d.misalign != c.misalign || d.grid != c.grid)) s.push_back(d);
  return s;
}
std::string describe(const Case& c) {
  return "n=" + std::to_string(c.n) + " seed=" + std::to_string(c.seed) + " block=" + std::to_string(c.block) +
         " grid=" + std::to_string(c.grid) + " misalign=" + std::to_string(c.misalign);
}

TEST(Property, RandomInputsAndLaunchesGiveTheExactSum) {
  SKIP_WITHOUT_GPU();
  const int sms = sm_count();
  prop::check<Case>(
      "exact_sum", 200, [&](prop::Rng& rng) { return random_case(rng, sms); },
      [](const Case& c) { return exact_bits_failure(values_of(c), c); }, smaller_cases, describe);
}

// Property, per distribution of many scales (the suite's patterns, common/input.hpp): the same random
// launches over the pattern's values, the bits against the CPU's exact sum. 200 cases each;
// REDUCE_PROPERTY_LONG=1: 4,000.
class Distribution : public ::testing::TestWithParam<reduce::Pattern> {};
TEST_P(Distribution, RandomLaunchesGiveTheExactSum) {
  SKIP_WITHOUT_GPU();
  const reduce::Pattern pattern = GetParam();
  const int sms = sm_count();
  prop::check<Case>(
      std::string("exact_") + reduce::to_string(pattern), 200, [&](prop::Rng& rng) { return random_case(rng, sms); },
      [&](const Case& c) {
        std::vector<float> x(static_cast<std::size_t>(c.n));
        reduce::fill_input(x.data(), c.n, pattern, c.seed);
        return exact_bits_failure(x, c);
      },
      smaller_cases,
      [&](const Case& c) { return std::string("pattern=") + reduce::to_string(pattern) + " " + describe(c); });
}
INSTANTIATE_TEST_SUITE_P(Patterns, Distribution,
                         ::testing::Values(reduce::Pattern::uniform, reduce::Pattern::mixed, reduce::Pattern::normal,
                                           reduce::Pattern::lognormal, reduce::Pattern::logu40,
                                           reduce::Pattern::logu120, reduce::Pattern::wide, reduce::Pattern::outliers,
                                           reduce::Pattern::products),
                         [](const auto& info) { return std::string(reduce::to_string(info.param)); });

// n > 2^32 (64-bit indexing all the way), one float past a 16-byte boundary, filled on the device with a
// period-7 pattern: the Acc must be the exact one, word for word (a dropped float would show).
__global__ void fill_period7(float* x, std::int64_t n) {
  const float v[7] = {1.0f, -0.75f, 0x1p-30f, 3e10f, -3e10f, 0x1p-140f, 2.5f};
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    x[i] = v[i % 7];
}
TEST(HugeInput, MoreThan2To32ElementsExactAcc) {
  SKIP_WITHOUT_GPU();
  const std::int64_t n = (std::int64_t{1} << 32) + 13;
  SKIP_WITHOUT_DEVICE_MEMORY(static_cast<double>(n + 8) * sizeof(float) + (1 << 30));
  reduce::DeviceBuffer<float> buf(static_cast<std::size_t>(n + 4));
  float* in = buf.get() + 1;
  fill_period7<<<4096, 256>>>(in, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const float v[7] = {1.0f, -0.75f, 0x1p-30f, 3e10f, -3e10f, 0x1p-140f, 2.5f};
  step15::Acc expect{};
  for (int r = 0; r < 7; ++r) {  // count_r copies of v[r]: the one-float Acc times count_r (below 2^62)
    const std::int64_t count = n / 7 + (r < n % 7 ? 1 : 0);
    step15::Acc one{};
    step15::add(one, v[r]);
    for (int k = 0; k < step15::kLimbs; ++k) expect.limb[k] += one.limb[k] * count;
    step15::normalize(expect);  // limbs back below 2^32 before the next product
  }
  reduce::DeviceBuffer<unsigned char> scratch(256);
  reduce::DeviceBuffer<step15::Acc> acc(1);
  reduce::DeviceBuffer<float> out(1);
  ASSERT_EQ(cudaMemset(scratch.get(), 0, scratch.bytes()), cudaSuccess);
  ASSERT_EQ(step15::accumulate(in, n, acc.get(), reduce::view(scratch), config(), nullptr), cudaSuccess);
  ASSERT_EQ(step15::launch(in, n, out.get(), reduce::view(scratch), config(1024, 1000), nullptr), cudaSuccess);
  step15::Acc got;
  float r = 0.0f;
  ASSERT_EQ(cudaMemcpy(&got, acc.get(), sizeof got, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&r, out.get(), sizeof r, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_TRUE(same_acc(got, expect));
  EXPECT_EQ(bits(r), bits(step15::rounded(expect)));
}

}  // namespace
