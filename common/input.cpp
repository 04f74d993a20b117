#include "input.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <thread>
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

// Runs body(begin, end) over [0, n) split into contiguous slices, one per hardware thread.
template <typename Body>
void parallel_for(std::int64_t n, Body body) {
  const std::int64_t threads = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, 64);
  const std::int64_t slices = std::min<std::int64_t>(threads, std::max<std::int64_t>(1, n / (1 << 16)));
  std::vector<std::thread> pool;
  for (std::int64_t t = 0; t < slices; ++t)
    pool.emplace_back([=] { body(n * t / slices, n * (t + 1) / slices); });
  for (auto& th : pool) th.join();
}

constexpr std::int64_t kChunk = std::int64_t{1} << 16;

}  // namespace

namespace {

// A random T from the hash h: 24 (float) or 53 (double) random bits in [0, 1); integers: all bits.
template <typename T>
T random_unit(std::uint64_t h) {
  if constexpr (std::is_same_v<T, float>) return static_cast<float>(h >> 40) * 0x1.0p-24f;  // exact in float
  else if constexpr (std::is_same_v<T, double>) return static_cast<double>(h >> 11) * 0x1.0p-53;
  else return static_cast<T>(h);
}

template <typename T>
T mixed_value(std::uint64_t h) {
  if constexpr (std::is_floating_point_v<T>) return T(2) * random_unit<T>(h) - T(1);
  else return static_cast<T>(static_cast<std::int64_t>(h >> 43) - (std::int64_t{1} << 20));  // [-2^20, 2^20)
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
    case Pattern::normal: return normal_of(h);
    case Pattern::lognormal: return std::exp(3.0 * normal_of(h));
    case Pattern::logu40: return log_uniform(h, 40);
    case Pattern::logu120: return log_uniform(h, 120);
    case Pattern::wide: {
      const std::uint32_t e = static_cast<std::uint32_t>((h >> 32) % 218), bits = (static_cast<std::uint32_t>(h >> 63) << 31) | (e << 23) | (h & 0x7fffff);
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
    case Pattern::outliers:
      if ((h >> 16) % 10000 == 0) return h & 1 ? -1e30 : 1e30;
      return 2.0 * static_cast<double>(h >> 40) * 0x1.0p-24 - 1.0;
    case Pattern::products: return log_uniform(h, 40) * log_uniform(splitmix64(h ^ 0x5DEECE66Dull), 40);
    default: return 0.0;
  }
}

}  // namespace

template <typename T>
T pattern_value(Pattern p, std::uint64_t seed, std::int64_t i) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  const std::uint64_t h = splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(i));
  const std::uint64_t rare = (h >> 8) & 0xFFFF;  // 0 for about one element in 65536
  switch (p) {
    case Pattern::constant: return T(1);
    case Pattern::integers: {
      const int k = static_cast<int>(h >> 61);  // 0..7
      return static_cast<T>(k < 4 ? k - 4 : k - 3);  // -4..-1, 1..4
    }
    case Pattern::uniform: return random_unit<T>(h);
    case Pattern::mixed: return mixed_value<T>(h);
    case Pattern::nan:
      if (i == 1 || rare == 0) return kFloat ? std::numeric_limits<T>::quiet_NaN() : max_identity<T>();
      return mixed_value<T>(h);
    case Pattern::inf:
      if (i == 2 || rare == 1) return kFloat ? std::numeric_limits<T>::infinity() : min_identity<T>();
      if (i == 4 || rare == 2) return kFloat ? -std::numeric_limits<T>::infinity() : max_identity<T>();
      return mixed_value<T>(h);
    case Pattern::ties:
      if constexpr (kFloat) return (h >> 63) ? T(-0.0) : T(0.0);
      else return (h >> 63) ? T(-7) : T(7);
    case Pattern::limits: {
      const bool negative = h >> 63;
      if constexpr (kFloat) {
        constexpr int kExp = std::numeric_limits<T>::max_exponent / 2 - 25;  // 39 for float, 487 for double
        const T m = std::ldexp(T(1) + random_unit<T>(h << 1), kExp);
        return negative ? -m : m;
      } else {
        const T off = static_cast<T>((h >> 32) & 7);
        return negative ? static_cast<T>(max_identity<T>() + off) : static_cast<T>(min_identity<T>() - off);
      }
    }
    case Pattern::normal:
    case Pattern::lognormal:
    case Pattern::logu40:
    case Pattern::logu120:
    case Pattern::wide:
    case Pattern::outliers:
    case Pattern::products:
      if constexpr (kFloat) return static_cast<T>(spread_value(p, h));
      else return mixed_value<T>(h);
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

template <typename T>
TypedReference<T> typed_reference(const T* x, std::int64_t n, bool moments) {
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<TypedReference<T>> part(chunks);
  auto chunk_range = [&](std::int64_t c) { return std::pair{c * kChunk, std::min(n, (c + 1) * kChunk)}; };
  parallel_for(chunks, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c) {
      TypedReference<T>& r = part[c];
      const auto [lo, hi] = chunk_range(c);
      for (std::int64_t i = lo; i < hi; ++i) {
        const long double v = static_cast<long double>(x[i]);
        r.sum += v;
        r.abs_sum += std::fabs(v);
        r.sum_squares += v * v;
        r.exact_sum = wrapping_add(r.exact_sum, static_cast<sum_t<T>>(x[i]));
        r.min = min_of(r.min, x[i]);
        r.max = max_of(r.max, x[i]);
      }
    }
  });
  TypedReference<T> r;
  r.count = n;
  for (const TypedReference<T>& p : part) {
    r.sum += p.sum;
    r.abs_sum += p.abs_sum;
    r.sum_squares += p.sum_squares;
    r.exact_sum = wrapping_add(r.exact_sum, p.exact_sum);
    r.min = min_of(r.min, p.min);
    r.max = max_of(r.max, p.max);
  }
  if (moments && n > 0) {
    r.mean = r.sum / n;
    std::vector<long double> m2(chunks);
    parallel_for(chunks, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t c = begin; c < end; ++c) {
        const auto [lo, hi] = chunk_range(c);
        for (std::int64_t i = lo; i < hi; ++i) m2[c] += (x[i] - r.mean) * (x[i] - r.mean);
      }
    });
    for (long double v : m2) r.m2 += v;
  }
  return r;
}

Reference reference_sum(const float* x, std::int64_t n) {
  const TypedReference<float> r = typed_reference(x, n, /*moments=*/false);
  return Reference{static_cast<double>(r.sum), static_cast<double>(r.abs_sum)};
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

namespace {
// An exact comparison is fair when the integer sum stays below 2^digits of the accumulator.
bool exact_sum_is_fair(Pattern p, long double sum, int digits) {
  return p == Pattern::integers && std::fabs(sum) <= std::ldexp(1.0L, digits);
}
}  // namespace

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

namespace {

// The check of a sum of n values of T in accumulator S.
template <typename T, typename S>
Check check_sum(S gpu, const TypedReference<T>& ref, Pattern p) {
  if constexpr (std::is_integral_v<S>) return check_value(gpu, ref.exact_sum, true, 0.0);  // exact, wrapped
  else
    return check_value(gpu, ref.sum, exact_sum_is_fair(p, ref.sum, std::numeric_limits<S>::digits),
                       tolerance_for(ref.count, static_cast<double>(ref.abs_sum), unit_roundoff<S>()));
}

}  // namespace

template <typename T, Op O>
Check check_typed(const typename op_t<O, T>::State& gpu, const TypedReference<T>& ref, Pattern p, std::string* failed) {
  if constexpr (O == Op::sum) return check_sum(gpu, ref, p);
  else if constexpr (O == Op::min) return check_value(gpu, ref.min, true, 0.0);
  else if constexpr (O == Op::max) return check_value(gpu, ref.max, true, 0.0);
  else {
    using R = real_t<T>;
    const double u = unit_roundoff<R>();
    const std::int64_t n = ref.count;
    const double squares_tol = tolerance_for(n, static_cast<double>(ref.sum_squares), u);
    const std::pair<const char*, Check> fields[] = {
        {"count", check_value(gpu.moments.count, n, true, 0.0)},
        {"sum", check_sum(gpu.sum, ref, p)},
        {"min", check_value(gpu.min, ref.min, true, 0.0)},
        {"max", check_value(gpu.max, ref.max, true, 0.0)},
        {"sum_squares", check_value(gpu.sum_squares, ref.sum_squares, false, squares_tol)},
        {"mean", check_value(gpu.moments.mean, ref.mean, false,
                             n > 0 ? tolerance_for(n, static_cast<double>(ref.abs_sum), u) / n : 0.0)},
        {"m2", check_value(gpu.moments.m2, ref.m2, false, 2.0 * squares_tol)},
    };
    // Reported: the first field that failed, or else the mean's check.
    for (const auto& [name, c] : fields)
      if (!c.passed) {
        if (failed) *failed = name;
        return c;
      }
    return fields[5].second;
  }
}

#define REDUCE_TYPED_INPUT(T)                                                                        \
  template T pattern_value<T>(Pattern, std::uint64_t, std::int64_t);                                \
  template void fill_input<T>(T*, std::int64_t, Pattern, std::uint64_t);                            \
  template void fill_input_at<T>(T*, std::int64_t, std::int64_t, Pattern, std::uint64_t);            \
  template TypedReference<T> typed_reference<T>(const T*, std::int64_t, bool);                      \
  template Check check_typed<T, Op::sum>(const op_t<Op::sum, T>::State&, const TypedReference<T>&, Pattern, std::string*); \
  template Check check_typed<T, Op::min>(const op_t<Op::min, T>::State&, const TypedReference<T>&, Pattern, std::string*); \
  template Check check_typed<T, Op::max>(const op_t<Op::max, T>::State&, const TypedReference<T>&, Pattern, std::string*); \
  template Check check_typed<T, Op::stats>(const op_t<Op::stats, T>::State&, const TypedReference<T>&, Pattern, std::string*);
REDUCE_TYPED_INPUT(float)
REDUCE_TYPED_INPUT(double)
REDUCE_TYPED_INPUT(std::int32_t)
REDUCE_TYPED_INPUT(std::int64_t)
#undef REDUCE_TYPED_INPUT

const char* to_string(Type t) {
  switch (t) {
    case Type::f32: return "float";
    case Type::f64: return "double";
    case Type::i32: return "int32";
    case Type::i64: return "int64";
  }
  return "?";
}

const char* to_string(Op o) {
  switch (o) {
    case Op::sum: return "sum";
    case Op::min: return "min";
    case Op::max: return "max";
    case Op::stats: return "stats";
  }
  return "?";
}

}  // namespace reduce
