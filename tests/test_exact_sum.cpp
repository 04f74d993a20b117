// The exact sum (exact_sum.hpp): cancellation, rounding ties, subnormals, range, special values, and
// agreement with long double on random data. CPU only.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "exact_sum.hpp"

namespace {

reduce::ExactSum sum_of(std::initializer_list<float> xs) {
  reduce::ExactSum s;
  for (float x : xs) s.add(x);
  return s;
}

TEST(ExactSum, EmptyIsZero) {
  EXPECT_EQ(reduce::ExactSum{}.to_double(), 0.0);
  EXPECT_EQ(reduce::exact_sum(nullptr, 0).to_float(), 0.0f);
}

TEST(ExactSum, CancellationLosesNothing) {
  EXPECT_EQ(sum_of({1e30f, 1.0f, -1e30f}).to_double(), 1.0);
  EXPECT_EQ(sum_of({3.0e38f, 3.0e38f, -3.0e38f, -3.0e38f, 0x1p-149f}).to_double(), 0x1p-149);
  // A plain float sum of these gives 0: the 1 is absorbed by 1e30 first.
  EXPECT_EQ((1e30f + 1.0f) + -1e30f, 0.0f);
}

TEST(ExactSum, NegativeSums) {
  EXPECT_EQ(sum_of({-1.5f, -2.25f}).to_double(), -3.75);
  EXPECT_EQ(sum_of({1.0f, -3.0f}).to_float(), -2.0f);
}

TEST(ExactSum, RoundsOnceToNearestEven) {
  // 1 + 2^-24 is halfway between two floats: ties to even gives 1; anything above the tie rounds up.
  EXPECT_EQ(sum_of({1.0f, 0x1p-24f}).to_float(), 1.0f);
  EXPECT_EQ(sum_of({1.0f, 0x1p-24f, 0x1p-149f}).to_float(), 1.0f + 0x1p-23f);
  EXPECT_EQ(sum_of({1.0f + 0x1p-23f, 0x1p-24f}).to_float(), 1.0f + 0x1p-22f);  // tie, odd below: up
  EXPECT_EQ(sum_of({1.0f, 0x1p-24f}).to_double(), 1.0 + 0x1p-24);              // exact in double
  EXPECT_EQ(sum_of({-1.0f, -0x1p-24f, -0x1p-149f}).to_float(), -(1.0f + 0x1p-23f));
}

TEST(ExactSum, SubnormalsAndTheTopOfTheRange) {
  EXPECT_EQ(sum_of({0x1p-149f, 0x1p-149f}).to_float(), 0x1p-148f);
  EXPECT_EQ(sum_of({std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min()}).to_double(),
            0.0);
  const float big = std::numeric_limits<float>::max();
  EXPECT_EQ(sum_of({big, big}).to_double(), 2.0 * static_cast<double>(big));  // finite in double
  EXPECT_EQ(sum_of({big, big}).to_float(), std::numeric_limits<float>::infinity());
  EXPECT_EQ(sum_of({big, big, -big}).to_float(), big);  // no intermediate overflow
}

TEST(ExactSum, SpecialValuesFollowIeee) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(sum_of({1.0f, inf}).to_float(), inf);
  EXPECT_EQ(sum_of({1.0f, -inf}).to_float(), -inf);
  EXPECT_TRUE(std::isnan(sum_of({inf, -inf}).to_float()));
  EXPECT_TRUE(std::isnan(sum_of({1.0f, nan}).to_double()));
  EXPECT_EQ(sum_of({1.0f, inf}).error_of(inf), 0.0);
  EXPECT_EQ(sum_of({1.0f, 2.0f}).error_of(inf), std::numeric_limits<double>::infinity());
}

TEST(ExactSum, ErrorOfIsExact) {
  const reduce::ExactSum s = sum_of({1e30f, 1.0f, -1e30f});
  EXPECT_EQ(s.error_of(0.0f), 1.0);  // what the plain float loop returns
  EXPECT_EQ(s.error_of(1.0f), 0.0);
  EXPECT_EQ(sum_of({1.0f, 0x1p-30f}).error_of(1.0f), 0x1p-30);
}

// Random data with mixed magnitudes: long double (64-bit mantissa on x86) sums 10^5 terms of at most
// 2^20 with error far below half a float ulp of the total, so the correctly rounded float must match
// long double's total rounded to float except at a near-tie, which these seeds do not hit; the
// double result must agree within a few long double roundings.
TEST(ExactSum, AgreesWithLongDoubleOnRandomData) {
  for (unsigned seed : {1u, 2u, 3u}) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
    std::uniform_int_distribution<int> expo(-20, 20);
    std::vector<float> x(100000);
    long double ld = 0;
    for (float& v : x) {
      v = std::ldexp(mant(gen), expo(gen));
      ld += v;
    }
    const reduce::ExactSum s = reduce::exact_sum(x.data(), static_cast<std::int64_t>(x.size()));
    EXPECT_NEAR(s.to_double(), static_cast<double>(ld), 1e-9 * std::fabs(static_cast<double>(ld)) + 1e-12)
        << "seed " << seed;
    EXPECT_EQ(s.to_float(), static_cast<float>(ld)) << "seed " << seed;
  }
}

// Many threads, fixed chunks: the parallel sum equals the serial one, whatever the grouping.
TEST(ExactSum, ParallelEqualsSerial) {
  std::vector<float> x((1 << 21) + 17);
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-1e10f, 1e10f);
  for (float& v : x) v = u(gen);
  reduce::ExactSum serial;
  for (float v : x) serial.add(v);
  const reduce::ExactSum parallel = reduce::exact_sum(x.data(), static_cast<std::int64_t>(x.size()));
  EXPECT_EQ(serial.to_double(), parallel.to_double());
  EXPECT_EQ(serial.error_of(parallel.to_float()), parallel.error_of(serial.to_float()));
}

}  // namespace
