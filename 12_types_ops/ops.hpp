// Reduction operators over any element type: what a reduction is, once for the host and the device.
//
// A reduction is an associative operator with an identity. Each operator below is a small struct:
//   State                what a partial reduction holds (the accumulator type, chosen on purpose);
//   identity()           the State of an empty input;
//   lift(x)              the State of the one element x;
//   combine(a, b)        the State of the concatenation of a's and b's inputs (associative).
// The kernel of step 12, the CPU reference and the CPU tests all call these same functions, so the
// semantics (NaN, signed zeros, integer wrap) are defined exactly once. CPU-only code includes this
// header too: REDUCE_HD is empty there.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>

#if defined(__CUDACC__)
#define REDUCE_HD __host__ __device__
#else
#define REDUCE_HD
#endif

namespace reduce {

enum class Op { sum, min, max, stats };
enum class Type { f32, f64, i32, i64 };

// The accumulator of a sum: int32 sums into int64 (a plain int32 accumulator overflows at 2^25
// values near 64); int64 sums wrap as two's complement; floats sum in their own type, as CUB does.
template <typename T>
struct SumOf {
  using type = T;
};
template <>
struct SumOf<std::int32_t> {
  using type = std::int64_t;
};
template <typename T>
using sum_t = typename SumOf<T>::type;

// The real type of means and variances: float for float, double for everything else.
template <typename T>
using real_t = std::conditional_t<std::is_same_v<T, float>, float, double>;

// Adds in two's complement for integers (no undefined behaviour on overflow), plainly for floats.
template <typename S>
REDUCE_HD inline S wrapping_add(S a, S b) {
  if constexpr (std::is_integral_v<S>) {
    using U = std::make_unsigned_t<S>;
    return static_cast<S>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

// std::signbit on the host, CUDA's signbit on the device.
template <typename T>
REDUCE_HD inline bool sign_bit(T x) {
#if defined(__CUDA_ARCH__)
  return signbit(x);
#else
  return std::signbit(x);
#endif
}

template <typename T>
REDUCE_HD inline bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return x != x;
  else
    return false;
}

// min and max propagate NaN (numpy.min, torch.min); ±inf are ordinary numbers; of -0 and +0, min
// returns -0 and max returns +0 whatever their order (IEEE 754-2019 minimum / maximum), so the
// result never depends on the order in which a parallel reduction meets them.
template <typename T>
REDUCE_HD inline T min_of(T a, T b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  if constexpr (std::is_floating_point_v<T>) {
    if (a == b) return sign_bit(a) ? a : b;
  }
  return b < a ? b : a;
}

template <typename T>
REDUCE_HD inline T max_of(T a, T b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  if constexpr (std::is_floating_point_v<T>) {
    if (a == b) return sign_bit(a) ? b : a;
  }
  return b > a ? b : a;
}

// The identities of min and max: +inf / -inf for floats, the type's largest / smallest value for
// integers. They are also the answer for n = 0 (documented in step 12's README).
// (Macros rather than std::numeric_limits, whose functions are host-only for nvcc.)
template <typename T>
REDUCE_HD constexpr T min_identity() {
  if constexpr (std::is_same_v<T, float>)
    return HUGE_VALF;
  else if constexpr (std::is_same_v<T, double>)
    return HUGE_VAL;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return INT32_MAX;
  else
    return INT64_MAX;
}
template <typename T>
REDUCE_HD constexpr T max_identity() {
  if constexpr (std::is_same_v<T, float>)
    return -HUGE_VALF;
  else if constexpr (std::is_same_v<T, double>)
    return -HUGE_VAL;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return INT32_MIN;
  else
    return INT64_MIN;
}

template <typename T>
struct SumOp {
  using State = sum_t<T>;
  REDUCE_HD static State identity() { return State{0}; }
  REDUCE_HD static State lift(T x) { return static_cast<State>(x); }
  REDUCE_HD static State combine(State a, State b) { return wrapping_add(a, b); }
};

template <typename T>
struct MinOp {
  using State = T;
  REDUCE_HD static State identity() { return min_identity<T>(); }
  REDUCE_HD static State lift(T x) { return x; }
  REDUCE_HD static State combine(State a, State b) { return min_of(a, b); }
};

template <typename T>
struct MaxOp {
  using State = T;
  REDUCE_HD static State identity() { return max_identity<T>(); }
  REDUCE_HD static State lift(T x) { return x; }
  REDUCE_HD static State combine(State a, State b) { return max_of(a, b); }
};

// Count, mean and M2 = sum (x - mean)^2 of a set: the state of Welford's algorithm. Two sets merge
// by Chan et al.'s formula, exactly as sound as Welford's one-at-a-time update, and associative up
// to rounding, which is what a parallel reduction needs. Variance = M2 / count (population).
// The textbook E[x^2] - E[x]^2 subtracts two nearly equal large numbers and loses every digit when
// the mean is large against the spread; this never forms that difference.
template <typename R>
struct Moments {
  std::int64_t count = 0;
  R mean = 0;
  R m2 = 0;
};

template <typename R>
REDUCE_HD inline Moments<R> merge(const Moments<R>& a, const Moments<R>& b) {
  if (a.count == 0) return b;
  if (b.count == 0) return a;
  const std::int64_t n = a.count + b.count;
  // Equal means differ by 0, also when both are the same infinity (inf - inf would be NaN).
  const R delta = a.mean == b.mean ? R{0} : b.mean - a.mean;
  const R fb = static_cast<R>(b.count) / static_cast<R>(n);  // b's share of the merged set
  Moments<R> m;
  m.count = n;
  // a.mean + delta * fb is the sound form; with an infinite mean on one side it would give
  // inf - inf, so there (delta not finite: delta - delta is NaN) the plain weighted mean is used.
  m.mean = delta - delta == R{0} ? a.mean + delta * fb : a.mean * (R{1} - fb) + b.mean * fb;
  m.m2 = a.m2 + b.m2 + delta * delta * static_cast<R>(a.count) * fb;
  return m;
}

// stats: count, sum, min, max, sum of squares and the moments (mean, variance), in one pass.
template <typename T>
struct Stats {
  sum_t<T> sum = 0;
  T min = min_identity<T>();
  T max = max_identity<T>();
  real_t<T> sum_squares = 0;
  Moments<real_t<T>> moments;
};

template <typename T>
struct StatsOp {
  using State = Stats<T>;
  using R = real_t<T>;
  REDUCE_HD static State identity() { return State{}; }
  REDUCE_HD static State lift(T x) {
    State s;
    s.sum = static_cast<sum_t<T>>(x);
    s.min = s.max = x;
    s.sum_squares = static_cast<R>(x) * static_cast<R>(x);
    // M2 of one element is 0, or NaN for ±inf and NaN (x - x): the variance of data holding an
    // infinity is NaN, as numpy.var gives, whichever way the merges group the elements.
    s.moments = Moments<R>{1, static_cast<R>(x), static_cast<R>(x) - static_cast<R>(x)};
    return s;
  }
  REDUCE_HD static State combine(const State& a, const State& b) {
    State s;
    s.sum = wrapping_add(a.sum, b.sum);
    s.min = min_of(a.min, b.min);
    s.max = max_of(a.max, b.max);
    s.sum_squares = a.sum_squares + b.sum_squares;
    s.moments = merge(a.moments, b.moments);
    return s;
  }
};

// Op -> its struct, for a given element type.
template <Op O, typename T>
struct OpOf;
template <typename T>
struct OpOf<Op::sum, T> {
  using type = SumOp<T>;
};
template <typename T>
struct OpOf<Op::min, T> {
  using type = MinOp<T>;
};
template <typename T>
struct OpOf<Op::max, T> {
  using type = MaxOp<T>;
};
template <typename T>
struct OpOf<Op::stats, T> {
  using type = StatsOp<T>;
};
template <Op O, typename T>
using op_t = typename OpOf<O, T>::type;

// Type tag <-> C++ type.
template <Type>
struct TypeOf;
template <>
struct TypeOf<Type::f32> {
  using type = float;
};
template <>
struct TypeOf<Type::f64> {
  using type = double;
};
template <>
struct TypeOf<Type::i32> {
  using type = std::int32_t;
};
template <>
struct TypeOf<Type::i64> {
  using type = std::int64_t;
};

template <typename T>
constexpr Type type_tag();
template <>
constexpr Type type_tag<float>() {
  return Type::f32;
}
template <>
constexpr Type type_tag<double>() {
  return Type::f64;
}
template <>
constexpr Type type_tag<std::int32_t>() {
  return Type::i32;
}
template <>
constexpr Type type_tag<std::int64_t>() {
  return Type::i64;
}

// Calls f(T{}) with the C++ type of tag t; every tag is handled, so no switch elsewhere misses one.
template <typename F>
decltype(auto) with_type(Type t, F&& f) {
  switch (t) {
    case Type::f64:
      return f(double{});
    case Type::i32:
      return f(std::int32_t{});
    case Type::i64:
      return f(std::int64_t{});
    case Type::f32:
      break;
  }
  return f(float{});
}

// Calls f(std::integral_constant<Op, O>{}) for the op o.
template <typename F>
decltype(auto) with_op(Op o, F&& f) {
  switch (o) {
    case Op::min:
      return f(std::integral_constant<Op, Op::min>{});
    case Op::max:
      return f(std::integral_constant<Op, Op::max>{});
    case Op::stats:
      return f(std::integral_constant<Op, Op::stats>{});
    case Op::sum:
      break;
  }
  return f(std::integral_constant<Op, Op::sum>{});
}

// The names the command line and the reports use: float, double, int32, int64; sum, min, max, stats.
const char* to_string(Type t);
const char* to_string(Op o);

// The type or operator of that name (the option parser has accepted only these names): the first of
// the list where none matches.
template <typename E>
E by_name(const std::string& name, std::initializer_list<E> all) {
  for (E e : all)
    if (name == to_string(e)) return e;
  return *all.begin();
}

}  // namespace reduce
