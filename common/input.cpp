#include "input.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "report.hpp"  // summarize()

namespace reduce {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& body) {
  const std::int64_t threads = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, 64);
  const std::int64_t slices = std::min<std::int64_t>(threads, std::max<std::int64_t>(1, n / (1 << 16)));
  std::vector<std::thread> pool;
  for (std::int64_t t = 0; t < slices; ++t)
    pool.emplace_back([=, &body] { body(n * t / slices, n * (t + 1) / slices); });
  for (auto& th : pool) th.join();
}

namespace {

// A random T from the hash h: 24 (float) or 53 (double) random bits in [0, 1); integers: all bits.
template <typename T>
T random_unit(std::uint64_t h) {
  if constexpr (std::is_same_v<T, float>)
    return static_cast<float>(h >> 40) * 0x1.0p-24f;  // exact in float
  else if constexpr (std::is_same_v<T, double>)
    return static_cast<double>(h >> 11) * 0x1.0p-53;
  else
    return static_cast<T>(h);
}

template <typename T>
T mixed_value(std::uint64_t h) {
  if constexpr (std::is_floating_point_v<T>)
    return T(2) * random_unit<T>(h) - T(1);
  else
    return static_cast<T>(static_cast<std::int64_t>(h >> 43) - (std::int64_t{1} << 20));  // [-2^20, 2^20)
}

// A draw of the distributions of many scales from the element's hash h, in double.
double unit_open(std::uint64_t h) { return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53; }  // in (0, 1)
double normal_of(std::uint64_t h) {  // Box-Muller from two independent draws
  const double u = unit_open(h), v = unit_open(splitmix64(h));
  return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
}
double log_uniform(std::uint64_t h, double binades) {
  const double x = std::exp2(binades * (unit_open(h) - 0.5));
  return h & 1 ? -x : x;
}
double spread_value(Pattern p, std::uint64_t h) {
  switch (p) {
    case Pattern::normal:
      return normal_of(h);
    case Pattern::lognormal:
      return std::exp(3.0 * normal_of(h));
    case Pattern::logu40:
      return log_uniform(h, 40);
    case Pattern::logu120:
      return log_uniform(h, 120);
    case Pattern::wide: {
      const std::uint32_t e = static_cast<std::uint32_t>((h >> 32) % 218),
                          bits = (static_cast<std::uint32_t>(h >> 63) << 31) | (e << 23) | (h & 0x7fffff);
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
    case Pattern::outliers:
      if ((h >> 16) % 10000 == 0) return h & 1 ? -1e30 : 1e30;
      return 2.0 * static_cast<double>(h >> 40) * 0x1.0p-24 - 1.0;
    case Pattern::products:
      return log_uniform(h, 40) * log_uniform(splitmix64(h ^ 0x5DEECE66Dull), 40);
    default:
      return 0.0;
  }
}

}  // namespace

template <typename T>
T pattern_value(Pattern p, std::uint64_t seed, std::int64_t i) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  const std::uint64_t h = splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(i));
  const std::uint64_t rare = (h >> 8) & 0xFFFF;  // 0 for about one element in 65536
  switch (p) {
    case Pattern::constant:
      return T(1);
    case Pattern::integers: {
      const int k = static_cast<int>(h >> 61);       // 0..7
      return static_cast<T>(k < 4 ? k - 4 : k - 3);  // -4..-1, 1..4
    }
    case Pattern::uniform:
      return random_unit<T>(h);
    case Pattern::mixed:
      return mixed_value<T>(h);
    case Pattern::nan:
      if (i == 1 || rare == 0) return kFloat ? std::numeric_limits<T>::quiet_NaN() : std::numeric_limits<T>::lowest();
      return mixed_value<T>(h);
    case Pattern::inf:
      if (i == 2 || rare == 1) return kFloat ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
      if (i == 4 || rare == 2) return kFloat ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
      return mixed_value<T>(h);
    case Pattern::ties:
      if constexpr (kFloat)
        return (h >> 63) ? T(-0.0) : T(0.0);
      else
        return (h >> 63) ? T(-7) : T(7);
    case Pattern::limits: {
      const bool negative = h >> 63;
      if constexpr (kFloat) {
        constexpr int kExp = std::numeric_limits<T>::max_exponent / 2 - 25;  // 39 for float, 487 for double
        const T m = std::ldexp(T(1) + random_unit<T>(h << 1), kExp);
        return negative ? -m : m;
      } else {
        const T off = static_cast<T>((h >> 32) & 7);
        return negative ? static_cast<T>(std::numeric_limits<T>::lowest() + off)
                        : static_cast<T>(std::numeric_limits<T>::max() - off);
      }
    }
    case Pattern::normal:
    case Pattern::lognormal:
    case Pattern::logu40:
    case Pattern::logu120:
    case Pattern::wide:
    case Pattern::outliers:
    case Pattern::products:
      if constexpr (kFloat)
        return static_cast<T>(spread_value(p, h));
      else
        return mixed_value<T>(h);
  }
  return T(0);
}

template <typename T>
void fill_input(T* out, std::int64_t n, Pattern p, std::uint64_t seed) {
  fill_input_at(out, 0, n, p, seed);
}

template <typename T>
void fill_input_at(T* out, std::int64_t first, std::int64_t n, Pattern p, std::uint64_t seed) {
  parallel_for(n, [=](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) out[i] = pattern_value<T>(p, seed, first + i);
  });
}

Reference reference_sum(const float* x, std::int64_t n) {
  struct Sums {
    long double sum = 0, abs_sum = 0;  // as precise as the CPU gives (x87: 64-bit mantissa)
  };
  const Sums s = fold_chunks(
      x, n, Sums{},
      [](Sums& a, float v) {
        a.sum += static_cast<long double>(v);
        a.abs_sum += std::fabs(static_cast<long double>(v));
      },
      [](Sums& a, const Sums& b) { a.sum += b.sum, a.abs_sum += b.abs_sum; });
  return Reference{static_cast<double>(s.sum), static_cast<double>(s.abs_sum)};
}

double time_cpu_sum(const float* x, std::int64_t n, int runs, float* result) {
  return time_cpu(runs, [&] {
    float s = 0.0f;
    for (std::int64_t i = 0; i < n; ++i) s += x[i];
    *static_cast<volatile float*>(result) = s;  // keeps the loop alive
  });
}

double time_cpu_sum_parallel(const float* x, std::int64_t n, int runs, float* result, int* threads) {
#ifdef _OPENMP
  *threads = omp_get_max_threads();
#else
  *threads = 1;
#endif
  return time_cpu(runs, [&] {
    float s = 0.0f;
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) s += x[i];
    *static_cast<volatile float*>(result) = s;
  });
}

double tolerance_for(std::int64_t n, double abs_sum, double unit_roundoff) {
  const double chain = 2.0 * std::sqrt(static_cast<double>(n)) + 64.0;
  return unit_roundoff * chain * abs_sum;
}

bool exact_sum_is_fair(Pattern p, long double sum, int digits) {
  return p == Pattern::integers && std::fabs(sum) <= std::ldexp(1.0L, digits);
}

bool uses_exact_check(Pattern p, const Reference& ref) { return exact_sum_is_fair(p, ref.sum, 24); }

Check check_value(long double gpu, long double ref, bool exact, double tolerance) {
  Check c;
  c.exact = exact;
  c.tolerance = exact ? 0.0 : tolerance;
  c.abs_error = static_cast<double>(std::fabs(gpu - ref));
  if (std::isnan(ref) || std::isinf(ref))  // the input held NaN or inf: the result must be the same
    c.passed = std::isnan(ref) ? std::isnan(gpu) : gpu == ref;
  else if (exact)  // -0 and +0 differ (min and max define which one is right)
    c.passed = gpu == ref && std::signbit(gpu) == std::signbit(ref);
  else  // written so that NaN fails: every comparison with NaN is false
    c.passed = std::isfinite(gpu) && c.abs_error <= c.tolerance;
  return c;
}

Check check_result(float gpu, const Reference& ref, std::int64_t n, Pattern p) {
  const bool exact = uses_exact_check(p, ref);
  // A float sum's reference is finite; a NaN or inf result never passes.
  Check c = check_value(gpu, ref.sum, exact, tolerance_for(n, ref.abs_sum));
  c.passed = c.passed && std::isfinite(gpu);
  return c;
}

#define REDUCE_TYPED_INPUT(T)                                            \
  template T pattern_value<T>(Pattern, std::uint64_t, std::int64_t);     \
  template void fill_input<T>(T*, std::int64_t, Pattern, std::uint64_t); \
  template void fill_input_at<T>(T*, std::int64_t, std::int64_t, Pattern, std::uint64_t);
REDUCE_TYPED_INPUT(float)
REDUCE_TYPED_INPUT(double)
REDUCE_TYPED_INPUT(std::int32_t)
REDUCE_TYPED_INPUT(std::int64_t)
#undef REDUCE_TYPED_INPUT

}  // namespace reduce
