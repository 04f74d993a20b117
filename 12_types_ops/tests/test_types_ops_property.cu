// Step 12 as a property (tests/property.hpp): cases drawn from seeds, each type and operator, n from 0
// to a few million (mostly small, often at an edge: 2^k +- 1, whole tiles +- 1), the input 0-3
// elements past an aligned address, any of the suite's patterns with at times one special value at a
// random place, and the SM count the launch is told (its grid: a GPU with fewer SMs). Each is checked
// against the CPU reference (common/input.hpp): exact for integers, min and max, and for float sums of
// small integers wherever sum |x| stays below 2^digits (then every partial sum of every order is
// exact); the suite's tolerance elsewhere; NaN as ops.hpp defines it. Each case runs twice on one
// scratch: the same bits, and the flags left zero. Skipped, with the reason, without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "12_types_ops/reference.hpp"
#include "12_types_ops/types_ops.cuh"
#include "device.cuh"
#include "input.hpp"
#include "tests/gpu_test_util.hpp"
#include "tests/property.hpp"

namespace {

using reduce::Op;
using reduce::Pattern;
using reduce::Type;

constexpr std::int64_t kMaxN = (std::int64_t{1} << 22) + 1;  // float sums of the int pattern stay exact
constexpr int kSpecials = 5;                                 // special_value()'s choices

struct Case {
  Type type = Type::f32;
  Op op = Op::sum;
  Pattern pattern = Pattern::integers;
  std::uint64_t seed = 0;
  std::int64_t first = 0;  // the input is elements first .. first + n - 1 of the pattern
  std::int64_t n = 0;
  int offset = 0;                // elements between an aligned allocation and the input
  int sms = 0;                   // the SM count the launch is told
  std::int64_t special_at = -1;  // the element (of the pattern) replaced by special_value(special), or -1
  int special = 0;
};

// NaN, +-inf and both zeros for floats; the extremes, 0 and -1 for integers.
template <typename T>
T special_value(int k) {
  using L = std::numeric_limits<T>;
  if constexpr (std::is_floating_point_v<T>) {
    const T v[kSpecials] = {L::quiet_NaN(), L::infinity(), -L::infinity(), T(-0.0), T(0.0)};
    return v[k];
  } else {
    const T v[kSpecials] = {L::max(), L::lowest(), T(0), T(-1), L::max()};
    return v[k];
  }
}

std::string describe(const Case& c) {
  std::ostringstream s;
  s << reduce::to_string(c.type) << " " << reduce::to_string(c.op) << " n=" << c.n << " offset=" << c.offset
    << " sms=" << c.sms << " pattern=" << reduce::to_string(c.pattern) << " seed=" << c.seed << " first=" << c.first;
  if (c.special_at >= c.first && c.special_at < c.first + c.n)
    s << " special#" << c.special << "@" << c.special_at - c.first;
  return s.str();
}

// n skewed to what breaks reductions: tiny inputs, powers of two +- 1, whole tiles of the kernel
// (512 threads x 4 loads x one 16-byte vector) +- 1, and the rest log-uniform up to kMaxN.
std::int64_t random_n(prop::Rng& rng, Type t) {
  const std::int64_t tile = std::int64_t{step12::kBlock} * 4 * (t == Type::f32 || t == Type::i32 ? 4 : 2);
  const auto near = [&](std::int64_t v) { return std::clamp<std::int64_t>(v + prop::uniform(rng, -1, 1), 0, kMaxN); };
  switch (prop::uniform(rng, 0, 3)) {
    case 0:
      return prop::uniform(rng, 0, 70);
    case 1:
      return near(std::int64_t{1} << prop::uniform(rng, 0, 22));
    case 2:
      return near(tile * prop::uniform(rng, 1, 400));
    default:
      return std::clamp<std::int64_t>(std::llround(std::exp2(std::uniform_real_distribution<double>(0, 22)(rng))), 1,
                                      kMaxN);
  }
}

Case generate(prop::Rng& rng, int device_sms) {
  static const std::vector<Type> types = {Type::f32, Type::f64, Type::i32, Type::i64};
  static const std::vector<Op> ops = {Op::sum, Op::min, Op::max, Op::stats};
  static const std::vector<Pattern> patterns = {Pattern::integers, Pattern::integers, Pattern::mixed,
                                                Pattern::uniform,  Pattern::constant, Pattern::nan,
                                                Pattern::inf,      Pattern::ties,     Pattern::limits};
  Case c;
  c.type = prop::pick(rng, types);
  c.op = prop::pick(rng, ops);
  c.pattern = prop::pick(rng, patterns);
  c.seed = static_cast<std::uint64_t>(prop::uniform(rng, 1, 1 << 30));
  c.n = random_n(rng, c.type);
  c.offset = static_cast<int>(prop::uniform(rng, 0, 3));
  // Mostly the device as it is; else a GPU of 1 SM up to it (fewer blocks, more tiles each).
  c.sms = prop::uniform(rng, 0, 2) == 0 ? static_cast<int>(prop::uniform(rng, 1, device_sms)) : device_sms;
  if (c.n > 0 && prop::uniform(rng, 0, 2) == 0) {
    // Often at an end, where the misaligned head and tail are read apart from the body.
    const std::int64_t ends[] = {0, 1, c.n - 1, c.n - 2, prop::uniform(rng, 0, c.n - 1)};
    c.special_at = std::clamp<std::int64_t>(ends[prop::uniform(rng, 0, 4)], 0, c.n - 1);
    c.special = static_cast<int>(prop::uniform(rng, 0, kSpecials - 1));
  }
  return c;
}

// Simpler cases that may still fail: aligned, no special value, the int pattern, fewer SMs (fewer
// blocks: a failure that needs more tiles than blocks then shrinks to a smaller n), a smaller window of
// the input.
std::vector<Case> smaller(const Case& c) {
  if (reduce_test::gpu_context_lost()) return {};  // every case fails now: shrinking would mislead
  prop::Candidates<Case> out(c);
  if (c.offset != 0) out.add([](Case& d) { d.offset = 0; });
  if (c.special_at >= 0) out.add([](Case& d) { d.special_at = -1; });
  if (c.pattern != Pattern::integers) out.add([](Case& d) { d.pattern = Pattern::integers; });
  for (std::int64_t s : prop::smaller_sizes(c.sms))
    if (s > 0) out.add([&](Case& d) { d.sms = static_cast<int>(s); });
  for (const prop::Window& w : prop::smaller_windows(c.first, c.n))
    out.add([&](Case& d) { d.first = w.first, d.n = w.n; });
  return out.take();
}

template <typename T, Op O>
std::string verify(const Case& c) {
  using S = step12::State<T, O>;
  const std::int64_t n = c.n;
  std::vector<T> x(static_cast<std::size_t>(n));
  reduce::fill_input_at(x.data(), c.first, n, c.pattern, c.seed);
  const bool special = c.special_at >= c.first && c.special_at < c.first + n;
  if (special) x[c.special_at - c.first] = special_value<T>(c.special);

  const reduce::LaunchConfig cfg{step12::kBlock, 0, c.sms};
  const std::size_t bytes = step12::scratch_bytes<T, O>(n, cfg);
  reduce::DeviceBuffer<T> in(n + c.offset);
  reduce::DeviceBuffer<S> out(2);
  reduce::DeviceBuffer<unsigned char> scratch(bytes);
  reduce::Stream stream;
  if (n > 0)
    CUDA_CHECK(cudaMemcpyAsync(in.get() + c.offset, x.data(), n * sizeof(T), cudaMemcpyHostToDevice, stream.get()));
  CUDA_CHECK(cudaMemsetAsync(scratch.get(), 0, bytes, stream.get()));
  CUDA_CHECK(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), stream.get()));  // an unwritten result fails
  for (int run = 0; run < 2; ++run)
    CUDA_CHECK(
        (step12::launch<T, O>(in.get() + c.offset, n, out.get() + run, {scratch.get(), bytes}, cfg, stream.get())));
  S got[2];
  CUDA_CHECK(cudaMemcpyAsync(got, out.get(), sizeof got, cudaMemcpyDeviceToHost, stream.get()));
  const std::size_t flags = 32 * static_cast<std::size_t>(c.sms) * sizeof(unsigned);
  std::vector<unsigned char> back(flags);
  CUDA_CHECK(cudaMemcpyAsync(back.data(), scratch.get(), flags, cudaMemcpyDeviceToHost, stream.get()));
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  if (std::memcmp(&got[0], &got[1], sizeof(S)) != 0) return "a second launch on the same scratch gave other bits";
  if (std::any_of(back.begin(), back.end(), [](unsigned char b) { return b != 0; }))
    return "the launches left a flag of the scratch set";
  if (!reduce::device_equals_host(in.get() + c.offset, x.data(), n)) return "the input was modified";

  const auto ref = reduce::typed_reference(x.data(), n, O == Op::stats);
  std::string field;
  const reduce::Check check = reduce::check_typed<T, O>(got[0], ref, c.pattern, &field);
  std::ostringstream why;
  if (!check.passed) {
    why << (field.empty() ? "result" : field) << ": |error| " << check.abs_error
        << (check.exact ? " (exact check)" : " > tolerance " + std::to_string(check.tolerance));
    return why.str();
  }
  // Small integers in float or double: sum |x| (and sum x^2) at most 2^digits bounds every partial sum
  // that any order of additions forms, so each is exact, and so must the result be.
  if constexpr (std::is_floating_point_v<T> && (O == Op::sum || O == Op::stats)) {
    const long double exact_below = std::ldexp(1.0L, std::numeric_limits<T>::digits);
    const bool finite = !special || c.special >= 3;  // specials 3 and 4 are the zeros
    if (c.pattern == Pattern::integers && finite) {
      T sum, squares = 0;
      if constexpr (O == Op::sum)
        sum = got[0];
      else
        sum = got[0].sum, squares = got[0].sum_squares;
      if (ref.abs_sum <= exact_below && sum != ref.sum)
        why << "sum " << sum << ", exactly " << static_cast<double>(ref.sum) << "; ";
      if (O == Op::stats && ref.sum_squares <= exact_below && squares != ref.sum_squares)
        why << "sum of squares " << squares << ", exactly " << static_cast<double>(ref.sum_squares);
    }
  }
  return why.str();
}

std::string verify_case(const Case& c) {
  return reduce_test::verify_on_gpu([&] {
    return reduce::with_type(c.type, [&](auto tv) {
      return reduce::with_op(c.op, [&](auto ov) { return verify<decltype(tv), decltype(ov)::value>(c); });
    });
  });
}

TEST(TypesOpsProperty, RandomSizesTypesOperatorsAndOffsetsMatchTheReference) {
  SKIP_WITHOUT_GPU();
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  prop::check<Case>(
      "12_types_ops", 240, [&](prop::Rng& rng) { return generate(rng, sms); }, verify_case, smaller, describe);
}

}  // namespace
