// Step 12 on the GPU: every type x operator over the size matrix of tests/test_steps.cu, the special
// patterns (NaN, inf, signed-zero ties, values near the int limits), NaN and inf at chosen positions,
// misaligned inputs, determinism, scratch reuse, and one int32 input of more than 2^31 elements.
// Skipped, with the reason, where no CUDA device is present.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "12_types_ops/reference.hpp"
#include "12_types_ops/types_ops.cuh"
#include "device.cuh"
#include "input.hpp"
#include "tests/gpu_test_util.hpp"

namespace reduce {
// Test names and failure messages show a type and an operator by name.
void PrintTo(Type t, std::ostream* os) { *os << to_string(t); }
void PrintTo(Op o, std::ostream* os) { *os << to_string(o); }
}  // namespace reduce

namespace {

using reduce::Op;
using reduce::Pattern;
using reduce::Type;

reduce::LaunchConfig config() {
  int sms = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  return reduce::LaunchConfig{step12::kBlock, 0, sms};
}

// One run of (T, O) on host data x (uploaded at element offset), checked against the reference;
// returns the result. Fresh zero-filled scratch unless one is given; the output poisoned first.
template <typename T, Op O>
step12::State<T, O> run_checked(const std::vector<T>& x, Pattern p, const std::string& what, std::int64_t offset = 0,
                                reduce::Scratch scratch = {}) {
  using S = step12::State<T, O>;
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  const reduce::LaunchConfig cfg = config();
  reduce::DeviceBuffer<T> in(n + offset);
  reduce::DeviceBuffer<S> out(1);
  reduce::DeviceBuffer<unsigned char> own(scratch.data ? 0 : step12::scratch_bytes<T, O>(n, cfg));
  if (!scratch.data) {
    CUDA_CHECK(cudaMemset(own.get(), 0, own.bytes()));
    scratch = reduce::Scratch{own.get(), own.bytes()};
  }
  if (n > 0) CUDA_CHECK(cudaMemcpy(in.get() + offset, x.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(out.get(), 0xFF, sizeof(S)));
  CUDA_CHECK(cudaDeviceSynchronize());
  reduce::Stream stream;
  CUDA_CHECK((step12::launch<T, O>(in.get() + offset, n, out.get(), scratch, cfg, stream.get())));
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  S got;
  CUDA_CHECK(cudaMemcpy(&got, out.get(), sizeof(S), cudaMemcpyDeviceToHost));

  const auto ref = reduce::typed_reference(x.data(), n, O == Op::stats);
  std::string field;
  const reduce::Check c = reduce::check_typed<T, O>(got, ref, p, &field);
  EXPECT_TRUE(c.passed) << reduce::to_string(reduce::type_tag<T>()) << " " << reduce::to_string(O) << " n=" << n
                        << " pattern=" << reduce::to_string(p) << " offset=" << offset << " " << what << ": "
                        << (field.empty() ? "result" : field) << " |error| " << c.abs_error
                        << (c.exact ? " (exact check)" : "") << ", tolerance " << c.tolerance;
  if (n > 0) {
    std::vector<T> back(n);
    CUDA_CHECK(cudaMemcpy(back.data(), in.get() + offset, n * sizeof(T), cudaMemcpyDeviceToHost));
    EXPECT_EQ(std::memcmp(back.data(), x.data(), n * sizeof(T)), 0) << "the input was modified";
  }
  return got;
}

template <typename T>
std::vector<T> input(std::int64_t n, Pattern p, std::uint64_t seed = 12345) {
  std::vector<T> x(n);
  reduce::fill_input(x.data(), n, p, seed);
  return x;
}

// Calls f.template operator()<T, O>() for every type and operator.
template <typename F>
void for_each_type_and_op(Type t, Op o, F&& f) {
  reduce::with_type(t, [&](auto tv) { reduce::with_op(o, [&](auto ov) { f(tv, ov); }); });
}

const Type kTypes[] = {Type::f32, Type::f64, Type::i32, Type::i64};
const Op kOps[] = {Op::sum, Op::min, Op::max, Op::stats};

// The sizes of tests/test_steps.cu: the identity, tiny, around warp and block sizes, primes,
// 2^k +- 1, beyond a 50-60 MB L2 for every type.
const std::int64_t kSizes[] = {
    0,    1,    2,     31,    32,    33,      255,     256,     257,     1023,          1024,
    1025, 4093, 65521, 65535, 65537, 1000003, 1048575, 1048577, 9999991, (1 << 24) + 1, (1 << 25) - 1};

using Case = std::tuple<Type, Op>;
std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(reduce::to_string(std::get<0>(info.param))) + "_" + reduce::to_string(std::get<1>(info.param));
}

class TypesOps : public ::testing::TestWithParam<Case> {};

TEST_P(TypesOps, MatchesReferenceAtEverySizeAndPattern) {
  SKIP_WITHOUT_GPU();
  const auto [t, o] = GetParam();
  for_each_type_and_op(t, o, [&](auto tv, auto ov) {
    using T = decltype(tv);
    for (std::int64_t n : kSizes)
      for (Pattern p : {Pattern::integers, Pattern::mixed, Pattern::uniform, Pattern::constant})
        run_checked<T, decltype(ov)::value>(input<T>(n, p), p, "size matrix");
  });
}

TEST_P(TypesOps, SpecialPatterns) {
  SKIP_WITHOUT_GPU();
  const auto [t, o] = GetParam();
  for_each_type_and_op(t, o, [&](auto tv, auto ov) {
    using T = decltype(tv);
    for (std::int64_t n : {1, 3, 5, 33, 1025, 65537, 1000003, (1 << 24) + 1})
      for (Pattern p : {Pattern::nan, Pattern::inf, Pattern::ties, Pattern::limits})
        run_checked<T, decltype(ov)::value>(input<T>(n, p), p, "special pattern");
  });
}

// One special value at the first, a middle, the last element, and in the unaligned head and tail:
// NaN, +inf and -inf for the floating-point types; integers have none, so they get the type's
// largest and smallest values there instead (what the nan and inf patterns put in their place).
TEST_P(TypesOps, SpecialValueAtEveryPosition) {
  SKIP_WITHOUT_GPU();
  const auto [t, o] = GetParam();
  for_each_type_and_op(t, o, [&](auto tv, auto ov) {
    using T = decltype(tv);
    using limits = std::numeric_limits<T>;
    std::vector<T> specials = {limits::max(), limits::lowest()};
    if constexpr (std::is_floating_point_v<T>)
      specials = {limits::quiet_NaN(), limits::infinity(), -limits::infinity()};
    for (std::int64_t n : {1, 7, 4099, 1000003})
      for (std::int64_t at : {std::int64_t{0}, n / 2, n - 1})
        for (T special : specials)
          for (std::int64_t offset : {0, 1}) {
            auto x = input<T>(n, Pattern::mixed);
            x[at] = special;
            run_checked<T, decltype(ov)::value>(x, Pattern::mixed, "special at " + std::to_string(at), offset);
          }
  });
}

TEST_P(TypesOps, MisalignedInputs) {
  SKIP_WITHOUT_GPU();
  const auto [t, o] = GetParam();
  for_each_type_and_op(t, o, [&](auto tv, auto ov) {
    using T = decltype(tv);
    for (std::int64_t offset : {1, 2, 3})
      for (std::int64_t n : {1, 3, 5, 1000, 1000003})
        run_checked<T, decltype(ov)::value>(input<T>(n, Pattern::integers), Pattern::integers, "misaligned", offset);
  });
}

// 20 runs with one scratch buffer: bitwise the same every time, and the scratch zero-filled after.
TEST_P(TypesOps, DeterministicAndLeavesScratchZeroed) {
  SKIP_WITHOUT_GPU();
  const auto [t, o] = GetParam();
  for_each_type_and_op(t, o, [&](auto tv, auto ov) {
    using T = decltype(tv);
    constexpr Op O = decltype(ov)::value;
    const auto x = input<T>((1 << 23) + 5, Pattern::mixed);
    const std::size_t bytes = step12::scratch_bytes<T, O>(x.size(), config());
    reduce::DeviceBuffer<unsigned char> scratch(bytes);
    CUDA_CHECK(cudaMemset(scratch.get(), 0, bytes));
    const auto first = run_checked<T, O>(x, Pattern::mixed, "run 0", 0, {scratch.get(), bytes});
    for (int run = 1; run < 20; ++run) {
      const auto again = run_checked<T, O>(x, Pattern::mixed, "run " + std::to_string(run), 0, {scratch.get(), bytes});
      ASSERT_EQ(std::memcmp(&first, &again, sizeof(first)), 0) << "run " << run << " differs";
    }
    run_checked<T, O>(input<T>(1000, Pattern::uniform), Pattern::uniform, "small after large", 0,
                      {scratch.get(), bytes});
    std::vector<unsigned char> back(bytes);
    CUDA_CHECK(cudaMemcpy(back.data(), scratch.get(), bytes, cudaMemcpyDeviceToHost));
    const std::size_t flags = 32 * static_cast<std::size_t>(config().sm_count) * sizeof(unsigned);
    for (std::size_t i = 0; i < flags; ++i) ASSERT_EQ(back[i], 0) << "flag byte " << i << " left set";
  });
}

// The loops no longer test each element for NaN: min and max use one NaN-propagating instruction (or a
// compare and select) per element and recompute a zero result exactly; stats detects NaN and infinity
// from its shifted sum of squares and takes its shift from the first element a thread reads. Each of
// those paths gets a special value where it is most likely to be missed: the last element in the
// misaligned tail, the first element of a thread's first vector (its shift), and a zero extreme with
// both signs present.
TEST_P(TypesOps, SpecialValueInTheTailAndAtAThreadsFirstElement) {
  SKIP_WITHOUT_GPU();
  const auto [t, o] = GetParam();
  for_each_type_and_op(t, o, [&](auto tv, auto ov) {
    using T = decltype(tv);
    using limits = std::numeric_limits<T>;
    constexpr std::int64_t kWidth = 16 / sizeof(T);
    constexpr std::int64_t kTileVectors = std::int64_t{step12::kBlock} * 4;  // 4 loads in flight
    std::vector<T> specials = {limits::max(), limits::lowest()};
    if constexpr (std::is_floating_point_v<T>)
      specials = {limits::quiet_NaN(), limits::infinity(), -limits::infinity()};
    const std::int64_t n = (3 * kTileVectors - 5) * kWidth + kWidth - 1;  // a partial tile, and a tail at offset 0
    for (std::int64_t offset : {0, 1})
      for (T special : specials) {
        // offset 1: the head holds kWidth - 1 elements, the body starts after them.
        const std::int64_t head = offset ? kWidth - 1 : 0;
        const std::int64_t positions[] = {
            n - 1,                                         // the last element: in the tail
            head,                                          // thread 0 of block 0: its first element
            head + kWidth * (kTileVectors + 5),            // block 1, thread 5: the first element it reads
            head + kWidth * (2 * kTileVectors + 511) + 1,  // inside a vector, not a thread's shift
        };
        for (std::int64_t at : positions) {
          auto x = input<T>(n, Pattern::mixed);
          x[at] = special;
          run_checked<T, decltype(ov)::value>(x, Pattern::mixed, "special at " + std::to_string(at), offset);
        }
      }
  });
}

// A zero extreme with both signs in the input: max of negatives and zeros must be +0, min of
// positives and zeros -0, wherever the zeros stand (the fast min/max may pick either; the exact
// re-read must fix the sign).
TEST_P(TypesOps, ZeroExtremeHasTheRightSign) {
  SKIP_WITHOUT_GPU();
  const auto [t, o] = GetParam();
  for_each_type_and_op(t, o, [&](auto tv, auto ov) {
    using T = decltype(tv);
    constexpr Op O = decltype(ov)::value;
    if constexpr (std::is_floating_point_v<T> && O != Op::sum) {
      for (std::int64_t n : {5, 4099, 1000003})
        for (bool negatives : {true, false}) {
          auto x = input<T>(n, Pattern::uniform);  // [0, 1)
          for (auto& v : x) v = negatives ? -(v + T{1}) : v + T{1};
          for (std::int64_t at : {std::int64_t{0}, n / 3, n - 1}) x[at] = T{-0.0};
          x[n / 2] = T{0.0};
          run_checked<T, O>(x, Pattern::mixed, negatives ? "negatives and zeros" : "positives and zeros");
          const auto got = run_checked<T, O>(x, Pattern::mixed, "misaligned", 1);
          if constexpr (O == Op::max) {
            if (negatives) EXPECT_FALSE(std::signbit(got)) << "max(-0, +0) must be +0";
          } else if constexpr (O == Op::min) {
            if (!negatives) EXPECT_TRUE(std::signbit(got)) << "min(-0, +0) must be -0";
          }
        }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Step12, TypesOps, ::testing::Combine(::testing::ValuesIn(kTypes), ::testing::ValuesIn(kOps)),
                         case_name);

// The identities for n = 0, stated exactly.
TEST(TypesOpsEmpty, GivesTheIdentity) {
  SKIP_WITHOUT_GPU();
  const std::vector<float> none;
  EXPECT_EQ((run_checked<float, Op::min>(none, Pattern::uniform, "empty")), std::numeric_limits<float>::infinity());
  EXPECT_EQ((run_checked<float, Op::max>(none, Pattern::uniform, "empty")), -std::numeric_limits<float>::infinity());
  EXPECT_EQ((run_checked<std::int32_t, Op::min>({}, Pattern::uniform, "empty")),
            std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ((run_checked<std::int64_t, Op::max>({}, Pattern::uniform, "empty")),
            std::numeric_limits<std::int64_t>::lowest());
  EXPECT_EQ((run_checked<double, Op::stats>({}, Pattern::uniform, "empty")).moments.count, 0);
  EXPECT_EQ((run_checked<std::int64_t, Op::sum>({}, Pattern::uniform, "empty")), 0);
}

// Stats of data with a large mean and a small spread: 1e4 + values in [-1, 1). The variance is about
// 1/3, and the textbook E[x^2] - E[x]^2 in float is off by more than that (its E[x^2] ~ 1e8 carries a
// rounding error of about 6). The kernel's per-thread shift must keep M2 within a relative 1e-3
// (float) and 1e-9 (double) of the two-pass reference, far tighter than the check's default bound.
TEST(TypesOpsStats, ShiftedDataKeepItsVariance) {
  SKIP_WITHOUT_GPU();
  auto run = [](auto zero, double relative) {
    using T = decltype(zero);
    for (std::int64_t n : {4099, 1000003, (1 << 24) + 1}) {
      auto x = input<T>(n, Pattern::mixed);
      for (auto& v : x) v += T{10000};
      const auto got = run_checked<T, Op::stats>(x, Pattern::mixed, "shifted");
      const auto ref = reduce::typed_reference(x.data(), n, true);
      const double m2 = static_cast<double>(ref.m2);
      EXPECT_NEAR(static_cast<double>(got.moments.m2), m2, relative * m2) << "n=" << n;
      EXPECT_NEAR(static_cast<double>(got.moments.mean), static_cast<double>(ref.mean), 1e-3) << "n=" << n;
    }
  };
  run(float{}, 1e-3);
  run(double{}, 1e-9);
}

// An int32 sum that overflows int32 many times over, exact in its int64 accumulator; an int64 sum
// that wraps.
TEST(TypesOpsIntegers, Int32SumIsExactAndInt64SumWraps) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::int32_t> big((1 << 20) + 3, std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ((run_checked<std::int32_t, Op::sum>(big, Pattern::limits, "all INT32_MAX")),
            static_cast<std::int64_t>(big.size()) * std::numeric_limits<std::int32_t>::max());
  const std::vector<std::int64_t> wrap = {std::numeric_limits<std::int64_t>::max(), 1};
  EXPECT_EQ((run_checked<std::int64_t, Op::sum>(wrap, Pattern::limits, "INT64_MAX + 1")),
            std::numeric_limits<std::int64_t>::lowest());
}

// More than 2^31 int32 elements (8.6 GB): a 32-bit index wraps and drops or repeats elements, which
// the exact sum, min and max catch.
TEST(HugeInputTypes, Int32OverTwoTo31Elements) {
  SKIP_WITHOUT_GPU();
  const std::int64_t n = (std::int64_t{1} << 31) + 1025;
  SKIP_WITHOUT_DEVICE_MEMORY(n * 4.0 + (1 << 30));
  auto x = input<std::int32_t>(n, Pattern::mixed);
  x[n - 1] = std::numeric_limits<std::int32_t>::max();  // the extremes at the very end and past 2^31
  x[(std::int64_t{1} << 31) + 7] = std::numeric_limits<std::int32_t>::lowest();
  run_checked<std::int32_t, Op::sum>(x, Pattern::mixed, "huge");
  run_checked<std::int32_t, Op::min>(x, Pattern::mixed, "huge");
  run_checked<std::int32_t, Op::max>(x, Pattern::mixed, "huge");
  run_checked<std::int32_t, Op::stats>(x, Pattern::mixed, "huge");
}

}  // namespace
