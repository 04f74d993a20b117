// The accumulator and its one rounding (exact_acc.hpp), on the CPU: the same code the kernels run. Its
// rounding against the rules math.fsum follows (the exact sum, rounded once to nearest even: ties,
// subnormal results, overflow to infinity, NaN and infinities), against the harness's ExactSum on random
// data over the whole exponent range, and the property 16's all-reduce needs: word-by-word sums of Accs
// are sums of values. The fsum cases (cases.cpp) all agree with ExactSum.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "15_exact/cases.hpp"
#include "15_exact/exact_acc.hpp"
#include "exact_sum.hpp"

namespace {

constexpr float kMax = std::numeric_limits<float>::max(), kTiny = std::numeric_limits<float>::denorm_min();
constexpr float kInf = std::numeric_limits<float>::infinity();

step15::Acc acc_of(const std::vector<float>& xs) {
  step15::Acc a{};
  for (float x : xs) step15::add(a, x);
  return a;
}
float sum_of(const std::vector<float>& xs) { return step15::rounded(acc_of(xs)); }
std::uint32_t bits(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

TEST(AccRounding, EmptyAndExactZeroArePlusZero) {
  EXPECT_EQ(bits(sum_of({})), 0u);
  EXPECT_EQ(bits(sum_of({-0.0f, -0.0f})), 0u);  // math.fsum([-0.0]) is 0.0 too
  EXPECT_EQ(bits(sum_of({1.5f, -1.5f})), 0u);
}

TEST(AccRounding, OrderDoesNotMatter) {
  EXPECT_EQ(sum_of({1e8f, 1.0f, -1e8f}), 1.0f);
  EXPECT_EQ(sum_of({1e38f, 1.0f, -1e38f}), 1.0f);
  EXPECT_EQ((1e8f + 1.0f) + -1e8f, 0.0f);  // the float loop from the left
}

TEST(AccRounding, TiesGoToEven) {
  EXPECT_EQ(sum_of({1.0f, 0x1p-24f}), 1.0f);
  EXPECT_EQ(sum_of({1.0f + 0x1p-23f, 0x1p-24f}), 1.0f + 0x1p-22f);
  EXPECT_EQ(sum_of({1.0f, 0x1p-24f, kTiny}), 1.0f + 0x1p-23f);  // a sticky bit far below breaks the tie
  EXPECT_EQ(sum_of({-1.0f, -0x1p-24f}), -1.0f);
  EXPECT_EQ(sum_of({0x1p23f, 0.5f}), 0x1p23f);                // 2^23 + 1/2: tie, even below
  EXPECT_EQ(sum_of({0x1p23f + 1.0f, 0.5f}), 0x1p23f + 2.0f);  // odd below: up, across a digit
}

TEST(AccRounding, SubnormalResultsAreExact) {
  EXPECT_EQ(sum_of({kTiny, kTiny, kTiny}), 3 * kTiny);
  EXPECT_EQ(sum_of({0x1p-126f, -kTiny}), 0x1p-126f - kTiny);  // the largest subnormal
  EXPECT_EQ(sum_of({0x1p-127f, 0x1p-127f}), 0x1p-126f);       // two subnormals make the smallest normal
  EXPECT_EQ(sum_of({-kTiny}), -kTiny);
}

TEST(AccRounding, BeyondTheRangeIsInfinity) {
  EXPECT_EQ(sum_of({kMax, kMax}), kInf);
  EXPECT_EQ(sum_of({kMax, kMax, -kMax}), kMax);  // no intermediate overflow
  EXPECT_EQ(sum_of({kMax, 0x1p103f}), kInf);     // halfway between kMax and 2^128: even is 2^128
  EXPECT_EQ(sum_of({kMax, 0x1p102f}), kMax);
  EXPECT_EQ(sum_of({-kMax, -0x1p103f}), -kInf);
}

TEST(AccRounding, SpecialValuesFollowIeee) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(sum_of({1.0f, nan})));
  EXPECT_TRUE(std::isnan(sum_of({kInf, -kInf})));
  EXPECT_TRUE(std::isnan(sum_of({kInf, nan})));
  EXPECT_EQ(sum_of({1.0f, kInf, -kMax}), kInf);
  EXPECT_EQ(sum_of({-kInf, kMax, kMax}), -kInf);
}

// Carry-save: a limb may hold any int64; only the value sum limb[k] 2^(32k - 149) counts.
TEST(AccRounding, CarrySaveFormsRoundAsTheirValue) {
  step15::Acc a{}, b{};
  a.limb[4] = 1ll << 40;  // 2^(128 - 149 + 40) = 2^19
  b.limb[5] = 1ll << 8;
  EXPECT_EQ(step15::rounded(a), 0x1p19f);
  EXPECT_EQ(step15::rounded(a), step15::rounded(b));
  a.limb[3] = -1;  // 2^19 - 2^-53
  EXPECT_EQ(step15::rounded(a), 0x1p19f);
  a.limb[5] = -(1ll << 9);  // 2^19 - 2^20 - 2^-53: negative
  EXPECT_EQ(step15::rounded(a), -0x1p19f);
  step15::normalize(a);
  for (int k = 0; k + 1 < step15::kLimbs; ++k) EXPECT_TRUE(a.limb[k] >= 0 && a.limb[k] < (1ll << 32)) << k;
  EXPECT_EQ(a.limb[step15::kLimbs - 1], -1);
}

std::vector<float> whole_range(std::mt19937& gen, int n) {
  std::vector<float> x(n);
  for (float& v : x) {
    const float m = static_cast<float>(std::uniform_int_distribution<int>(0, (1 << 24) - 1)(gen));
    v = std::ldexp(gen() & 1 ? -m : m, std::uniform_int_distribution<int>(-149, 104)(gen));
  }
  return x;
}

TEST(AccRounding, AgreesWithExactSumOverTheWholeRange) {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    std::mt19937 gen(seed);
    std::vector<float> x = whole_range(gen, 1 + static_cast<int>(gen() % 300));
    // Mostly cancel: the low bits then decide, and subnormal and tie results turn up.
    if (seed % 2)
      for (std::size_t i = 0, m = x.size(); i + 1 < m; i += 2) x[i + 1] = -x[i] * (gen() % 3 ? 1.0f : 0.5f);
    EXPECT_EQ(bits(sum_of(x)), bits(reduce::exact_sum(x.data(), static_cast<std::int64_t>(x.size())).to_float()))
        << "seed " << seed;
  }
}

// Exact ties at every scale: m 2^e + 2^(e-1) (m of 24 bits) is halfway between two floats; a bit far
// below breaks the tie upwards, and a bit taken away downwards.
TEST(AccRounding, RandomTiesAtEveryScale) {
  std::mt19937 gen(11);
  for (int trial = 0; trial < 1000; ++trial) {
    const int e = std::uniform_int_distribution<int>(-148, 104)(gen);
    const float m = static_cast<float>((1 << 23) | (gen() & 0x7fffff)), sign = gen() & 1 ? -1.0f : 1.0f;
    const float base = sign * std::ldexp(m, e), half = sign * std::ldexp(1.0f, e - 1);
    for (const std::vector<float>& x : {std::vector<float>{base, half}, std::vector<float>{half, base, sign * kTiny},
                                        std::vector<float>{base, half, -sign * kTiny}}) {
      if (std::isinf(base)) continue;
      EXPECT_EQ(bits(sum_of(x)), bits(reduce::exact_sum(x.data(), static_cast<std::int64_t>(x.size())).to_float()))
          << "e=" << e << " m=" << m << " terms " << x.size();
    }
  }
}

// What an all-reduce of int64 words does: the word-by-word sum of normalized Accs is the sum's Acc.
TEST(AccRounding, WordSumsOfAccsAreSumsOfValues) {
  std::mt19937 gen(5);
  const std::vector<float> x = whole_range(gen, 3000);
  step15::Acc total{};
  for (int rank = 0; rank < 8; ++rank) {
    step15::Acc part{};
    for (std::size_t i = rank; i < x.size(); i += 8) step15::add(part, x[i]);
    step15::normalize(part);
    for (int k = 0; k < step15::kLimbs; ++k) total.limb[k] += part.limb[k];
    total.nan += part.nan, total.pos_inf += part.pos_inf, total.neg_inf += part.neg_inf;
  }
  EXPECT_EQ(bits(step15::rounded(total)), bits(sum_of(x)));
}

TEST(FsumCases, AccAndExactSumAgreeOnEveryCase) {
  for (const step15::Case& c : step15::fsum_cases())
    EXPECT_EQ(bits(sum_of(c.x)), bits(reduce::exact_sum(c.x.data(), static_cast<std::int64_t>(c.x.size())).to_float()))
        << c.name;
}

}  // namespace
