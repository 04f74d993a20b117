// Input patterns, the CPU reference, and the validation rule.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "input.hpp"

using reduce::Pattern;

namespace {

std::vector<float> make(Pattern p, std::int64_t n, std::uint64_t seed = 1) {
  std::vector<float> v(n);
  reduce::fill_input(v.data(), n, p, seed);
  return v;
}

}  // namespace

TEST(Patterns, AreReproducibleAndSeedDependent) {
  const auto a = make(Pattern::uniform, 100000, 7), b = make(Pattern::uniform, 100000, 7);
  const auto c = make(Pattern::uniform, 100000, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // Filled in parallel slices, yet element i is the same as a direct evaluation.
  for (std::int64_t i : {0, 1, 65535, 65536, 99999}) EXPECT_EQ(a[i], reduce::pattern_value(Pattern::uniform, 7, i));
}

TEST(Patterns, StayInTheirDocumentedRanges) {
  const std::int64_t n = 200000;
  for (float x : make(Pattern::constant, n)) ASSERT_EQ(x, 1.0f);
  std::set<float> ints;
  for (float x : make(Pattern::integers, n)) {
    ASSERT_TRUE(x >= -4 && x <= 4 && x != 0 && x == std::floor(x)) << x;
    ints.insert(x);
  }
  EXPECT_EQ(ints.size(), 8u);  // -4..-1 and 1..4 all occur
  bool negative = false;
  for (float x : make(Pattern::uniform, n)) ASSERT_TRUE(x >= 0.0f && x < 1.0f) << x;
  for (float x : make(Pattern::mixed, n)) {
    ASSERT_TRUE(x >= -1.0f && x < 1.0f) << x;
    negative |= x < 0;
  }
  EXPECT_TRUE(negative);
}

TEST(Reference, IsExactForIntegersAndAccurateForFloats) {
  const auto ints = make(Pattern::integers, 1000003);
  long long exact = 0;
  for (float x : ints) exact += static_cast<long long>(x);
  EXPECT_EQ(reduce::reference_sum(ints.data(), ints.size()).sum, static_cast<double>(exact));

  const auto ones = make(Pattern::constant, (1 << 24) + 3);  // past float's 2^24 ceiling for +1.0f
  EXPECT_EQ(reduce::reference_sum(ones.data(), ones.size()).sum, (1 << 24) + 3);

  const auto mixed = make(Pattern::mixed, 300000);
  long double precise = 0, abs_precise = 0;
  for (float x : mixed) {
    precise += x;
    abs_precise += std::fabs(x);
  }
  const reduce::Reference r = reduce::reference_sum(mixed.data(), mixed.size());
  EXPECT_NEAR(r.sum, static_cast<double>(precise), 1e-9);
  EXPECT_NEAR(r.abs_sum, static_cast<double>(abs_precise), 1e-6);
  EXPECT_EQ(reduce::reference_sum(nullptr, 0).sum, 0.0);
}

TEST(Reference, CpuBaselineIsThePlainFloatLoop) {
  const auto ones = make(Pattern::constant, (1 << 24) + 10);
  float result = 0.0f;
  EXPECT_GE(reduce::time_cpu_sum(ones.data(), ones.size(), 1, &result), 0.0);
  EXPECT_EQ(result, 16777216.0f);  // the float loop stalls at 2^24: why the reference is double
}

TEST(Tolerance, GrowsWithSqrtNAndTheSumOfMagnitudes) {
  const double u = std::ldexp(1.0, -24);
  EXPECT_DOUBLE_EQ(reduce::tolerance_for(1, 1.0), u * 66.0);
  EXPECT_DOUBLE_EQ(reduce::tolerance_for(1 << 20, 10.0), u * (2.0 * 1024 + 64) * 10.0);
  // Much tighter than the serial-sum bound n * u * sum|x| that would accept large errors.
  const std::int64_t n = std::int64_t{1} << 26;
  EXPECT_LT(reduce::tolerance_for(n, n * 0.5), 1e-3 * n * 0.5);
}

TEST(Check, IntegersAreComparedExactlySoOneDroppedElementFails) {
  const auto x = make(Pattern::integers, 100003);
  const reduce::Reference ref = reduce::reference_sum(x.data(), x.size());
  ASSERT_TRUE(reduce::uses_exact_check(Pattern::integers, ref));
  EXPECT_TRUE(reduce::check_result(static_cast<float>(ref.sum), ref, x.size(), Pattern::integers).passed);
  for (std::int64_t i : {0, 50000, 100002}) {  // drop, or count twice, any one element
    EXPECT_FALSE(reduce::check_result(static_cast<float>(ref.sum - x[i]), ref, x.size(), Pattern::integers).passed);
    EXPECT_FALSE(reduce::check_result(static_cast<float>(ref.sum + x[i]), ref, x.size(), Pattern::integers).passed);
  }
}

TEST(Check, FloatsPassWithinToleranceAndFailOutside) {
  const auto x = make(Pattern::uniform, 1 << 20);
  const reduce::Reference ref = reduce::reference_sum(x.data(), x.size());
  const double tol = reduce::tolerance_for(x.size(), ref.abs_sum);
  EXPECT_FALSE(reduce::uses_exact_check(Pattern::uniform, ref));
  EXPECT_TRUE(reduce::check_result(static_cast<float>(ref.sum), ref, x.size(), Pattern::uniform).passed);
  EXPECT_FALSE(reduce::check_result(static_cast<float>(ref.sum + 3 * tol), ref, x.size(), Pattern::uniform).passed);
  EXPECT_FALSE(reduce::check_result(static_cast<float>(ref.sum * 0.99), ref, x.size(), Pattern::uniform).passed);
}

TEST(Check, NanAndInfinityNeverPass) {
  const reduce::Reference ref{0.0, 1e30};  // a huge tolerance
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()})
    EXPECT_FALSE(reduce::check_result(bad, ref, 100, Pattern::mixed).passed) << bad;
}

TEST(Check, EmptyInputSumsToZero) {
  const reduce::Reference ref = reduce::reference_sum(nullptr, 0);
  EXPECT_TRUE(reduce::check_result(0.0f, ref, 0, Pattern::uniform).passed);
  EXPECT_FALSE(reduce::check_result(1.0f, ref, 0, Pattern::uniform).passed);
}
