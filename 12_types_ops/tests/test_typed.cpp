// 12_types_ops's typed pieces: operators (ops.hpp), typed patterns, the typed reference and check
// (reference.hpp), step-specific options, and the report's extra fields. CPU only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "12_types_ops/ops.hpp"
#include "12_types_ops/reference.hpp"
#include "input.hpp"
#include "options.hpp"
#include "report.hpp"

using reduce::Op;
using reduce::Pattern;

namespace {

template <typename T>
std::vector<T> make(Pattern p, std::int64_t n, std::uint64_t seed = 1) {
  std::vector<T> v(n);
  reduce::fill_input(v.data(), n, p, seed);
  return v;
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Every pair of an op's state merged in any grouping gives the one result (exact ops).
template <typename OpT, typename T>
typename OpT::State fold_all(const std::vector<T>& x) {
  auto s = OpT::identity();
  for (T v : x) s = OpT::combine(s, OpT::lift(v));
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
TEST(Ops, MinAndMaxPropagateNanInEitherPosition) {
  for (float other : {0.0f, -1.0f, kInf, -kInf}) {
    EXPECT_TRUE(std::isnan(reduce::min_of(kNaN, other)));
    EXPECT_TRUE(std::isnan(reduce::min_of(other, kNaN)));
    EXPECT_TRUE(std::isnan(reduce::max_of(kNaN, other)));
    EXPECT_TRUE(std::isnan(reduce::max_of(other, kNaN)));
  }
  // Once NaN, always NaN, wherever it stood.
  const std::vector<double> x = {1.0, 2.0, std::nan(""), -5.0, 7.0};
  EXPECT_TRUE(std::isnan(fold_all<reduce::MinOp<double>>(x)));
  EXPECT_TRUE(std::isnan(fold_all<reduce::MaxOp<double>>(x)));
}

TEST(Ops, InfinitiesAreOrdinaryNumbers) {
  EXPECT_EQ(reduce::min_of(kInf, 3.0f), 3.0f);
  EXPECT_EQ(reduce::min_of(-kInf, 3.0f), -kInf);
  EXPECT_EQ(reduce::max_of(kInf, 3.0f), kInf);
  EXPECT_EQ(reduce::max_of(-kInf, -3.0f), -3.0f);
}

TEST(Ops, MinOfSignedZerosIsMinusZeroInEitherOrder) {
  for (auto [a, b] : {std::pair{-0.0f, 0.0f}, std::pair{0.0f, -0.0f}}) {
    EXPECT_TRUE(std::signbit(reduce::min_of(a, b))) << a << " " << b;
    EXPECT_FALSE(std::signbit(reduce::max_of(a, b))) << a << " " << b;
  }
  EXPECT_TRUE(std::signbit(reduce::min_of(-0.0, 0.0)));
  EXPECT_FALSE(std::signbit(reduce::max_of(-0.0, 0.0)));
}

TEST(Ops, IdentitiesAreTheEmptyResult) {
  EXPECT_EQ(reduce::MinOp<float>::identity(), kInf);
  EXPECT_EQ(reduce::MaxOp<double>::identity(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(reduce::MinOp<std::int32_t>::identity(), std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(reduce::MaxOp<std::int64_t>::identity(), std::numeric_limits<std::int64_t>::lowest());
  EXPECT_EQ(reduce::SumOp<std::int32_t>::identity(), 0);
  const auto s = reduce::StatsOp<float>::identity();
  EXPECT_EQ(s.moments.count, 0);
  EXPECT_EQ(s.sum, 0.0f);
  // x combined with the identity is x, for every op.
  EXPECT_EQ(reduce::MinOp<int>::combine(reduce::MinOp<int>::identity(), 5), 5);
  EXPECT_EQ(reduce::MaxOp<int>::combine(5, reduce::MaxOp<int>::identity()), 5);
}

TEST(Ops, Int32SumsAccumulateInInt64) {
  static_assert(std::is_same_v<reduce::sum_t<std::int32_t>, std::int64_t>);
  const std::vector<std::int32_t> x(1000, std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(fold_all<reduce::SumOp<std::int32_t>>(x), 1000LL * std::numeric_limits<std::int32_t>::max());
}

TEST(Ops, Int64SumsWrapAsTwosComplement) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::lowest();
  EXPECT_EQ(reduce::wrapping_add(kMax, std::int64_t{1}), kMin);
  EXPECT_EQ(reduce::wrapping_add(kMin, std::int64_t{-1}), kMax);
  EXPECT_EQ(fold_all<reduce::SumOp<std::int64_t>>(std::vector<std::int64_t>{kMax, kMax, 2}), 0);  // 2^64 wraps to 0
  // Wrapping addition stays associative and commutative: any order gives the same bits.
  std::mt19937_64 rng(3);
  std::vector<std::int64_t> x(1000);
  for (auto& v : x) v = static_cast<std::int64_t>(rng());
  const std::int64_t forward = fold_all<reduce::SumOp<std::int64_t>>(x);
  std::shuffle(x.begin(), x.end(), rng);
  EXPECT_EQ(fold_all<reduce::SumOp<std::int64_t>>(x), forward);
}

// Chan's merge of per-chunk moments (what the kernel does per tile, per thread, per block) against
// a two-pass reference in long double; including a large mean over a small spread, where the
// textbook E[x^2] - E[x]^2 in float loses every digit.
TEST(Stats, ChanMergingMatchesTwoPassReference) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<float> x(100003);
  for (auto& v : x) v = static_cast<float>(1e4 + noise(rng));
  long double mean = 0, m2 = 0;
  for (float v : x) mean += v;
  mean /= x.size();
  for (float v : x) m2 += (v - mean) * (v - mean);

  for (std::size_t chunk : {1u, 7u, 64u, 1000u}) {  // merge chunks as a tree: pairs of neighbours
    std::vector<reduce::Stats<float>> parts;
    for (std::size_t i = 0; i < x.size(); i += chunk) {
      auto s = reduce::StatsOp<float>::identity();
      for (std::size_t j = i; j < std::min(x.size(), i + chunk); ++j)
        s = reduce::StatsOp<float>::combine(s, reduce::StatsOp<float>::lift(x[j]));
      parts.push_back(s);
    }
    while (parts.size() > 1) {
      std::vector<reduce::Stats<float>> next;
      for (std::size_t i = 0; i < parts.size(); i += 2)
        next.push_back(i + 1 < parts.size() ? reduce::StatsOp<float>::combine(parts[i], parts[i + 1]) : parts[i]);
      parts = next;
    }
    const auto& m = parts[0].moments;
    EXPECT_EQ(m.count, static_cast<std::int64_t>(x.size()));
    EXPECT_NEAR(m.mean, static_cast<double>(mean), 1e-3) << chunk;
    EXPECT_NEAR(m.m2 / m.count, static_cast<double>(m2 / x.size()), 0.02) << chunk;  // variance ~1
  }
  // The naive formula in float, for contrast: E[x^2] - E[x]^2 with E[x^2] ~ 1e8, variance ~ 1.
  float sum = 0, squares = 0;
  for (float v : x) {
    sum += v;
    squares += v * v;
  }
  const float naive = squares / x.size() - (sum / x.size()) * (sum / x.size());
  EXPECT_GT(std::fabs(naive - static_cast<float>(m2 / x.size())), 0.5f) << "the textbook formula happened to work";
}

// An infinity makes the variance NaN and the mean that infinity, whatever the grouping; the reference
// (two-pass) agrees, so the GPU's tile path and merge path both pass.
TEST(Stats, InfinitiesGiveInfiniteMeanAndNanVarianceInEveryGrouping) {
  const std::vector<float> x = {1.0f, kInf, 2.0f, kInf, 3.0f};
  const auto ref = reduce::typed_reference(x.data(), x.size(), true);
  EXPECT_EQ(ref.mean, kInf);
  EXPECT_TRUE(std::isnan(ref.m2));
  const auto serial = fold_all<reduce::StatsOp<float>>(x);
  const auto split =
      reduce::StatsOp<float>::combine(fold_all<reduce::StatsOp<float>>(std::vector<float>(x.begin(), x.begin() + 2)),
                                      fold_all<reduce::StatsOp<float>>(std::vector<float>(x.begin() + 2, x.end())));
  for (const auto& s : {serial, split}) {
    EXPECT_EQ(s.moments.mean, kInf);
    EXPECT_TRUE(std::isnan(s.moments.m2));
    std::string failed;
    EXPECT_TRUE((reduce::check_typed<float, Op::stats>(s, ref, Pattern::inf, &failed).passed)) << failed;
  }
}

TEST(Stats, MergingWithAnEmptyPartChangesNothing) {
  const auto one = reduce::StatsOp<double>::lift(3.5);
  const auto empty = reduce::StatsOp<double>::identity();
  for (const auto& s : {reduce::StatsOp<double>::combine(one, empty), reduce::StatsOp<double>::combine(empty, one)}) {
    EXPECT_EQ(s.moments.count, 1);
    EXPECT_EQ(s.moments.mean, 3.5);
    EXPECT_EQ(s.moments.m2, 0.0);
    EXPECT_EQ(s.min, 3.5);
    EXPECT_EQ(s.max, 3.5);
  }
}

// ---------------------------------------------------------------------------------------------
TEST(TypedPatterns, FloatValuesAreTheStepsOwn) {
  for (Pattern p : {Pattern::constant, Pattern::integers, Pattern::uniform, Pattern::mixed})
    for (std::int64_t i : {0, 1, 12345})
      EXPECT_EQ(reduce::pattern_value<float>(p, 9, i), reduce::pattern_value(p, 9, i));
}

TEST(TypedPatterns, SpecialValuesStandWhereDocumented) {
  const auto nan = make<float>(Pattern::nan, 1000);
  EXPECT_TRUE(std::isnan(nan[1]));
  EXPECT_FALSE(std::isnan(nan[0]));
  const auto inf = make<double>(Pattern::inf, 1000);
  EXPECT_EQ(inf[2], std::numeric_limits<double>::infinity());
  EXPECT_EQ(inf[4], -std::numeric_limits<double>::infinity());
  // About one element in 65536 more, at positions that depend on the seed.
  int nans = 0;
  for (float v : make<float>(Pattern::nan, 1 << 22)) nans += std::isnan(v);
  EXPECT_GT(nans, 20);
  EXPECT_LT(nans, 200);
  // Integers have no NaN or inf: the type's limits stand there instead.
  EXPECT_EQ(make<std::int32_t>(Pattern::nan, 10)[1], std::numeric_limits<std::int32_t>::lowest());
  const auto iinf = make<std::int64_t>(Pattern::inf, 10);
  EXPECT_EQ(iinf[2], std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(iinf[4], std::numeric_limits<std::int64_t>::lowest());
}

TEST(TypedPatterns, TiesAreSignedZerosOfBothSigns) {
  int negative = 0;
  for (float v : make<float>(Pattern::ties, 1000)) {
    ASSERT_EQ(v, 0.0f);
    negative += std::signbit(v);
  }
  EXPECT_GT(negative, 300);
  EXPECT_LT(negative, 700);
  for (std::int32_t v : make<std::int32_t>(Pattern::ties, 1000)) ASSERT_TRUE(v == 7 || v == -7);
}

TEST(TypedPatterns, LimitsStayNearTheTypesEnds) {
  for (std::int32_t v : make<std::int32_t>(Pattern::limits, 10000))
    ASSERT_TRUE(v >= std::numeric_limits<std::int32_t>::max() - 7 ||
                v <= std::numeric_limits<std::int32_t>::lowest() + 7)
        << v;
  for (std::int64_t v : make<std::int64_t>(Pattern::limits, 10000))
    ASSERT_TRUE(v >= std::numeric_limits<std::int64_t>::max() - 7 ||
                v <= std::numeric_limits<std::int64_t>::lowest() + 7)
        << v;
  // Floats: large, and their squares over 2^36 elements still finite.
  for (float v : make<float>(Pattern::limits, 10000)) {
    ASSERT_GE(std::fabs(v), std::ldexp(1.0f, 39));
    ASSERT_TRUE(std::isfinite(v * v * std::ldexp(1.0f, 36)));
  }
  for (double v : make<double>(Pattern::limits, 10000)) ASSERT_TRUE(std::isfinite(v * v * std::ldexp(1.0, 36)));
}

TEST(TypedPatterns, IntegerRangesAreAsDocumented) {
  for (std::int32_t v : make<std::int32_t>(Pattern::mixed, 100000)) ASSERT_TRUE(v >= -(1 << 20) && v < (1 << 20)) << v;
  bool big = false;
  for (std::int64_t v : make<std::int64_t>(Pattern::uniform, 1000))
    big |= v > (std::int64_t{1} << 62) || v < -(std::int64_t{1} << 62);
  EXPECT_TRUE(big);  // the whole range
  for (double v : make<double>(Pattern::uniform, 100000)) ASSERT_TRUE(v >= 0.0 && v < 1.0);
}

// ---------------------------------------------------------------------------------------------
TEST(TypedTolerance, ScalesWithTheUnitRoundoffOfTheType) {
  EXPECT_EQ(reduce::unit_roundoff<float>(), std::ldexp(1.0, -24));
  EXPECT_EQ(reduce::unit_roundoff<double>(), std::ldexp(1.0, -53));
  EXPECT_DOUBLE_EQ(reduce::tolerance_for(1 << 20, 10.0, reduce::unit_roundoff<double>()),
                   std::ldexp(1.0, -53) * (2.0 * 1024 + 64) * 10.0);
  EXPECT_EQ(reduce::tolerance_for(1 << 20, 10.0), reduce::tolerance_for(1 << 20, 10.0, std::ldexp(1.0, -24)));
}

TEST(TypedCheck, DoubleSumsPassWithinTheirToleranceAndFailAFloatSum) {
  const auto x = make<double>(Pattern::uniform, 1 << 20);
  const auto ref = reduce::typed_reference(x.data(), x.size(), false);
  double good = 0;
  for (double v : x) good += v;
  EXPECT_TRUE((reduce::check_typed<double, Op::sum>(good, ref, Pattern::uniform).passed));
  // A double sum that went through float (error ~ 2^-24 relative) is far outside 2^-53's tolerance.
  float through_float = 0;
  for (double v : x) through_float += static_cast<float>(v);
  EXPECT_FALSE((reduce::check_typed<double, Op::sum>(through_float, ref, Pattern::uniform).passed));
}

TEST(TypedCheck, IntegerSumsAreExactSoOneDroppedElementFails) {
  const auto x = make<std::int32_t>(Pattern::limits, 100003);
  const auto ref = reduce::typed_reference(x.data(), x.size(), false);
  std::int64_t exact = 0;
  for (std::int32_t v : x) exact += v;
  EXPECT_EQ(ref.exact_sum, exact);
  EXPECT_TRUE((reduce::check_typed<std::int32_t, Op::sum>(exact, ref, Pattern::limits).passed));
  EXPECT_FALSE((reduce::check_typed<std::int32_t, Op::sum>(exact - x[500], ref, Pattern::limits).passed));
  EXPECT_FALSE((reduce::check_typed<std::int32_t, Op::sum>(exact + 1, ref, Pattern::limits).passed));
}

TEST(TypedCheck, Int64ReferenceWrapsLikeTheGpu) {
  const auto x = make<std::int64_t>(Pattern::limits, 100003);
  const auto ref = reduce::typed_reference(x.data(), x.size(), false);
  std::uint64_t wrapped = 0;
  for (std::int64_t v : x) wrapped += static_cast<std::uint64_t>(v);
  EXPECT_EQ(ref.exact_sum, static_cast<std::int64_t>(wrapped));
  EXPECT_TRUE(
      (reduce::check_typed<std::int64_t, Op::sum>(static_cast<std::int64_t>(wrapped), ref, Pattern::limits).passed));
  EXPECT_FALSE((
      reduce::check_typed<std::int64_t, Op::sum>(static_cast<std::int64_t>(wrapped + 1), ref, Pattern::limits).passed));
}

TEST(TypedCheck, MinAndMaxAreExactIncludingTheSignOfZero) {
  const auto x = make<float>(Pattern::ties, 1000);
  const auto ref = reduce::typed_reference(x.data(), x.size(), false);
  EXPECT_TRUE(std::signbit(ref.min));
  EXPECT_FALSE(std::signbit(ref.max));
  EXPECT_TRUE((reduce::check_typed<float, Op::min>(-0.0f, ref, Pattern::ties).passed));
  EXPECT_FALSE((reduce::check_typed<float, Op::min>(0.0f, ref, Pattern::ties).passed));
  EXPECT_TRUE((reduce::check_typed<float, Op::max>(0.0f, ref, Pattern::ties).passed));
  EXPECT_FALSE((reduce::check_typed<float, Op::max>(-0.0f, ref, Pattern::ties).passed));
}

TEST(TypedCheck, NanAndInfInTheInputMustComeOutAsTheyAre) {
  const auto x = make<float>(Pattern::nan, 1000);
  const auto ref = reduce::typed_reference(x.data(), x.size(), true);
  EXPECT_TRUE((reduce::check_typed<float, Op::min>(kNaN, ref, Pattern::nan).passed));
  EXPECT_FALSE((reduce::check_typed<float, Op::min>(-1.0f, ref, Pattern::nan).passed));
  EXPECT_TRUE((reduce::check_typed<float, Op::sum>(kNaN, ref, Pattern::nan).passed));
  EXPECT_FALSE((reduce::check_typed<float, Op::sum>(0.0f, ref, Pattern::nan).passed));

  const auto y = make<float>(Pattern::inf, 4);  // +inf at element 2 only
  const auto yref = reduce::typed_reference(y.data(), y.size(), false);
  EXPECT_TRUE((reduce::check_typed<float, Op::sum>(kInf, yref, Pattern::inf).passed));
  EXPECT_FALSE((reduce::check_typed<float, Op::sum>(kNaN, yref, Pattern::inf).passed));
  EXPECT_TRUE((reduce::check_typed<float, Op::max>(kInf, yref, Pattern::inf).passed));
  const auto z = make<float>(Pattern::inf, 5);  // +inf and -inf: the sum is NaN, min -inf
  const auto zref = reduce::typed_reference(z.data(), z.size(), false);
  EXPECT_TRUE((reduce::check_typed<float, Op::sum>(kNaN, zref, Pattern::inf).passed));
  EXPECT_TRUE((reduce::check_typed<float, Op::min>(-kInf, zref, Pattern::inf).passed));
  // A finite reference never accepts NaN or inf, however loose the tolerance.
  const auto w = make<float>(Pattern::mixed, 100);
  const auto wref = reduce::typed_reference(w.data(), w.size(), false);
  EXPECT_FALSE((reduce::check_typed<float, Op::sum>(kNaN, wref, Pattern::mixed).passed));
  EXPECT_FALSE((reduce::check_typed<float, Op::sum>(kInf, wref, Pattern::mixed).passed));
}

TEST(TypedCheck, EmptyInputGivesTheIdentities) {
  const auto ref = reduce::typed_reference(static_cast<const double*>(nullptr), 0, true);
  EXPECT_TRUE((reduce::check_typed<double, Op::sum>(0.0, ref, Pattern::uniform).passed));
  EXPECT_TRUE((reduce::check_typed<double, Op::min>(reduce::MinOp<double>::identity(), ref, Pattern::uniform).passed));
  EXPECT_TRUE((reduce::check_typed<double, Op::max>(reduce::MaxOp<double>::identity(), ref, Pattern::uniform).passed));
  EXPECT_TRUE(
      (reduce::check_typed<double, Op::stats>(reduce::StatsOp<double>::identity(), ref, Pattern::uniform).passed));
  const auto iref = reduce::typed_reference(static_cast<const std::int32_t*>(nullptr), 0, true);
  EXPECT_TRUE(
      (reduce::check_typed<std::int32_t, Op::min>(std::numeric_limits<std::int32_t>::max(), iref, Pattern::uniform)
           .passed));
}

TEST(TypedCheck, StatsPassFieldByFieldAndNameTheFieldThatFails) {
  const auto x = make<float>(Pattern::uniform, 1 << 16);
  const auto ref = reduce::typed_reference(x.data(), x.size(), true);
  auto s = reduce::StatsOp<float>::identity();
  for (std::size_t i = 0; i < x.size(); i += 64) {  // tiles of 64, merged as the kernel does
    auto tile = reduce::StatsOp<float>::identity();
    for (std::size_t j = i; j < i + 64; ++j)
      tile = reduce::StatsOp<float>::combine(tile, reduce::StatsOp<float>::lift(x[j]));
    s = reduce::StatsOp<float>::combine(s, tile);
  }
  std::string failed;
  EXPECT_TRUE((reduce::check_typed<float, Op::stats>(s, ref, Pattern::uniform, &failed).passed)) << failed;
  auto wrong = s;
  wrong.moments.count -= 1;
  EXPECT_FALSE((reduce::check_typed<float, Op::stats>(wrong, ref, Pattern::uniform, &failed).passed));
  EXPECT_EQ(failed, "count");
  wrong = s;
  wrong.moments.m2 *= 1.01f;
  EXPECT_FALSE((reduce::check_typed<float, Op::stats>(wrong, ref, Pattern::uniform, &failed).passed));
  EXPECT_EQ(failed, "m2");
  wrong = s;
  wrong.max = 0.5f;
  EXPECT_FALSE((reduce::check_typed<float, Op::stats>(wrong, ref, Pattern::uniform, &failed).passed));
  EXPECT_EQ(failed, "max");
}

// ---------------------------------------------------------------------------------------------
namespace {
// --type and --op bound to `type` and `op`.
reduce::OptionSpec typed_spec(std::string& type, std::string& op) {
  reduce::OptionSpec spec;
  spec.extra = {reduce::choice_option("--type", type, {"float", "double"}, "element type"),
                reduce::choice_option("--op", op, {"sum", "min"}, "operator")};
  spec.patterns.push_back(Pattern::nan);
  return spec;
}
}  // namespace

TEST(ExtraOptions, DefaultToTheirFirstValueAndAcceptOnlyTheirValues) {
  std::string type, op;
  const reduce::OptionSpec spec = typed_spec(type, op);
  reduce::parse_options(std::vector<std::string>{}, spec);
  EXPECT_EQ(type, "float");
  EXPECT_EQ(op, "sum");
  const auto o =
      reduce::parse_options(std::vector<std::string>{"--type", "double", "--op=min", "--pattern", "nan"}, spec);
  EXPECT_EQ(type, "double");
  EXPECT_EQ(op, "min");
  EXPECT_EQ(o.pattern, Pattern::nan);
  try {
    reduce::parse_options(std::vector<std::string>{"--type", "half"}, spec);
    FAIL() << "--type half accepted";
  } catch (const reduce::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("float or double"), std::string::npos) << e.what();
  }
}

TEST(ExtraOptions, StepsWithoutThemRefuseThemAndTheSpecialPatterns) {
  EXPECT_THROW(reduce::parse_options(std::vector<std::string>{"--type", "float"}), reduce::UsageError);
  EXPECT_THROW(reduce::parse_options(std::vector<std::string>{"--pattern", "nan"}), reduce::UsageError);
  EXPECT_EQ(reduce::usage("01_interleaved").find("--type"), std::string::npos);
  std::string type, op;
  const std::string u = reduce::usage("12_types_ops", "any type", typed_spec(type, op));
  EXPECT_NE(u.find("--type float or double"), std::string::npos) << u;
  EXPECT_NE(u.find("also nan"), std::string::npos) << u;
}

// The option kinds a step beyond the progression may add: a value checked by a function, a flag;
// and the rules every option keeps (given twice, a flag with a value, --block refused with a reason).
TEST(ExtraOptions, ValuesFlagsAndTheStepsOwnDefaults) {
  std::int64_t gpus = 0;
  bool single_gpu = false;
  reduce::OptionSpec spec;
  spec.extra = {reduce::integer_option("--gpus", gpus, 0, 8, "GPUs to use"),
                reduce::flag_option("--single-gpu", single_gpu, "also time one GPU")};
  spec.default_n = std::int64_t{1} << 30;
  spec.block = reduce::BlockRule::inside("the library chooses its launch shape");
  const auto d = reduce::parse_options(std::vector<std::string>{}, spec);
  EXPECT_EQ(d.n, std::int64_t{1} << 30);
  EXPECT_EQ(gpus, 0);
  EXPECT_FALSE(single_gpu);
  EXPECT_FALSE(d.has("--gpus"));
  const auto o = reduce::parse_options(std::vector<std::string>{"--gpus=4", "--single-gpu"}, spec);
  EXPECT_EQ(gpus, 4);
  EXPECT_TRUE(single_gpu);
  EXPECT_TRUE(o.has("--gpus"));
  auto message = [&](std::vector<std::string> args) {
    try {
      reduce::parse_options(args, spec);
    } catch (const reduce::UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message({"--gpus", "9"}).find("an integer from 0 to 8"), std::string::npos);
  EXPECT_NE(message({"--single-gpu=1"}).find("takes no value"), std::string::npos);
  EXPECT_NE(message({"--n", "4", "--n", "8"}).find("given twice"), std::string::npos);
  EXPECT_NE(message({"--block", "256"}).find("the library chooses"), std::string::npos);
  const std::string u = reduce::usage("16_multi_gpu", "several GPUs", spec);
  EXPECT_EQ(u.rfind("16_multi_gpu: several GPUs\n", 0), 0u) << u;
  EXPECT_NE(u.find("[2^30]"), std::string::npos) << u;
  EXPECT_NE(u.find("--gpus N"), std::string::npos) << u;
  EXPECT_NE(u.find("refused here: the library chooses"), std::string::npos) << u;
  EXPECT_NE(u.find("Exit codes"), std::string::npos) << u;
}

TEST(ReportExtra, FieldsFollowTheCommonOnesInCsvAndJsonAndBytesUseTheElementSize) {
  reduce::Report r;
  r.n = 1000;
  r.element_bytes = 8;
  r.ms.median = 1.0;
  r.extra = {reduce::text_field("type", "double"), reduce::number_field("cub_gbps", 2.5)};
  reduce::derive_rates(r);
  EXPECT_DOUBLE_EQ(r.gbps, 8000.0 / 1e-3 / 1e9);
  const std::string header = reduce::csv_header(r);
  EXPECT_EQ(header.substr(0, reduce::csv_header().size()), reduce::csv_header());
  EXPECT_NE(header.find(",type,cub_gbps"), std::string::npos);
  const std::string json = reduce::format_json(r);
  EXPECT_NE(json.find("\"type\": \"double\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"cub_gbps\": 2.5"), std::string::npos) << json;
  EXPECT_NE(json.find("\"bytes\": 8000"), std::string::npos) << json;
}
