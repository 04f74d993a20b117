#include "reference.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace reduce {

template <typename T>
TypedReference<T> typed_reference(const T* x, std::int64_t n, bool moments) {
  TypedReference<T> r = fold_chunks(
      x, n, TypedReference<T>{},
      [](TypedReference<T>& a, T v) {
        const long double l = static_cast<long double>(v);
        a.sum += l;
        a.abs_sum += std::fabs(l);
        a.sum_squares += l * l;
        a.exact_sum = wrapping_add(a.exact_sum, static_cast<sum_t<T>>(v));
        a.min = min_of(a.min, v);
        a.max = max_of(a.max, v);
      },
      [](TypedReference<T>& a, const TypedReference<T>& b) {
        a.sum += b.sum;
        a.abs_sum += b.abs_sum;
        a.sum_squares += b.sum_squares;
        a.exact_sum = wrapping_add(a.exact_sum, b.exact_sum);
        a.min = min_of(a.min, b.min);
        a.max = max_of(a.max, b.max);
      });
  r.count = n;
  if (moments && n > 0) {
    r.mean = r.sum / n;
    const long double mean = r.mean;
    r.m2 = fold_chunks(
        x, n, 0.0L, [mean](long double& a, T v) { a += (v - mean) * (v - mean); },
        [](long double& a, long double b) { a += b; });
  }
  return r;
}

namespace {

// The check of a sum of n values of T in accumulator S.
template <typename T, typename S>
Check check_sum(S gpu, const TypedReference<T>& ref, Pattern p) {
  if constexpr (std::is_integral_v<S>)
    return check_value(gpu, ref.exact_sum, true, 0.0);  // exact, wrapped
  else
    return check_value(gpu, ref.sum, exact_sum_is_fair(p, ref.sum, std::numeric_limits<S>::digits),
                       tolerance_for(ref.count, static_cast<double>(ref.abs_sum), unit_roundoff<S>()));
}

}  // namespace

template <typename T, Op O>
Check check_typed(const typename op_t<O, T>::State& gpu, const TypedReference<T>& ref, Pattern p, std::string* failed) {
  if constexpr (O == Op::sum)
    return check_sum(gpu, ref, p);
  else if constexpr (O == Op::min)
    return check_value(gpu, ref.min, true, 0.0);
  else if constexpr (O == Op::max)
    return check_value(gpu, ref.max, true, 0.0);
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

#define REDUCE_CHECK_TYPED(T, O) \
  template Check check_typed<T, O>(const op_t<O, T>::State&, const TypedReference<T>&, Pattern, std::string*);
#define REDUCE_TYPED_REFERENCE(T)                                              \
  template TypedReference<T> typed_reference<T>(const T*, std::int64_t, bool); \
  REDUCE_CHECK_TYPED(T, Op::sum)                                               \
  REDUCE_CHECK_TYPED(T, Op::min)                                               \
  REDUCE_CHECK_TYPED(T, Op::max)                                               \
  REDUCE_CHECK_TYPED(T, Op::stats)
REDUCE_TYPED_REFERENCE(float)
REDUCE_TYPED_REFERENCE(double)
REDUCE_TYPED_REFERENCE(std::int32_t)
REDUCE_TYPED_REFERENCE(std::int64_t)
#undef REDUCE_TYPED_REFERENCE
#undef REDUCE_CHECK_TYPED

const char* to_string(Type t) {
  switch (t) {
    case Type::f32:
      return "float";
    case Type::f64:
      return "double";
    case Type::i32:
      return "int32";
    case Type::i64:
      return "int64";
  }
  return "?";
}

const char* to_string(Op o) {
  switch (o) {
    case Op::sum:
      return "sum";
    case Op::min:
      return "min";
    case Op::max:
      return "max";
    case Op::stats:
      return "stats";
  }
  return "?";
}

}  // namespace reduce
