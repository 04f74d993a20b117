// 12_types_ops's host side: its options, its results in the record (a reduction of elements of T under
// operator O, its State in ops.hpp, checked against the typed reference, reference.hpp) and the CPU
// yardstick of the same operator.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "harness.cuh"
#include "reference.hpp"
#include "types_ops.cuh"

namespace step12 {

using reduce::Op;

// The command line: --type and --op bound to `type` and `op` (names; the first of each the default).
inline reduce::OptionSpec spec(std::string& type, std::string& op) {
  reduce::OptionSpec s;
  s.summary = "Reduces n elements of --type with --op on the GPU";
  s.extra = {
      reduce::choice_option("--type", type, {"float", "double", "int32", "int64"},
                            "element type; an int32 sum accumulates in int64 (exact up to 2^32 elements),\n"
                            "                   an int64 sum wraps as two's complement"),
      reduce::choice_option("--op", op, {"sum", "min", "max", "stats"},
                            "operator; min and max propagate NaN, min(-0,+0) = -0, max(-0,+0) = +0, and n = 0\n"
                            "                   gives the identity (+inf / -inf, the type's max / min); stats = "
                            "count,\n                   sum, min, max, sum of squares, mean and variance (M2 / n) in "
                            "one pass")};
  s.patterns.insert(s.patterns.end(),
                    {reduce::Pattern::nan, reduce::Pattern::inf, reduce::Pattern::ties, reduce::Pattern::limits});
  s.block = step12::kBlockRule;
  s.notes =
      "Besides the step, the run times CUB's DeviceReduce for the same type and operator (stats: its four\n"
      "passes Sum, Min, Max and a sum of squares) and, for stats, this step's sum of the same type; the record\n"
      "gives each as <name>_median_ms, <name>_gbps, vs_<name> and <name>_passed (its every run checked like the\n"
      "step's; CUB's min and max need not propagate NaN). --cpu-runs times the same operator folded\n"
      "element by element on one CPU core (there is no all-cores yardstick here).";
  return s;
}

// The value a record shows as result: the result itself, or for stats its mean; reference_value the
// reference's counterpart. typed_verdict checks one result (check_typed, `what` the failing field).
template <typename T, Op O>
double shown_value(const typename reduce::op_t<O, T>::State& s) {
  if constexpr (O == Op::stats)
    return static_cast<double>(s.moments.mean);
  else
    return static_cast<double>(s);
}
template <typename T, Op O>
double reference_value(const reduce::TypedReference<T>& r) {
  if constexpr (O == Op::sum)
    return std::is_integral_v<T> ? double(r.exact_sum) : double(r.sum);
  else if constexpr (O == Op::min)
    return static_cast<double>(r.min);
  else if constexpr (O == Op::max)
    return static_cast<double>(r.max);
  else
    return static_cast<double>(r.mean);
}
template <typename T, Op O>
reduce::Verdict typed_verdict(const typename reduce::op_t<O, T>::State& s, const reduce::TypedReference<T>& ref,
                              reduce::Pattern p) {
  std::string what;
  const reduce::Check c = reduce::check_typed<T, O>(s, ref, p, &what);
  return reduce::Verdict(c, shown_value<T, O>(s), reference_value<T, O>(ref), what);
}
// CUB's result checked like the step's: its passes make no moments, so the check sees its sum, min, max
// and squares (the moments taken from the reference).
template <typename T, Op O>
reduce::Verdict cub_verdict(typename reduce::op_t<O, T>::State s, const reduce::TypedReference<T>& ref,
                            reduce::Pattern p) {
  if constexpr (O == Op::stats) {
    using M = decltype(s.moments);
    s.moments = M{ref.count, decltype(M::mean)(ref.mean), decltype(M::m2)(ref.m2)};
  }
  return typed_verdict<T, O>(s, ref, p);
}
// The result's own fields: result_exact, or stats' count, sum, min, max, sum_squares, mean and variance.
template <typename T, Op O>
std::vector<reduce::Field> typed_result_fields(const typename reduce::op_t<O, T>::State& s) {
  if constexpr (O != Op::stats) {
    return {reduce::text_field("result_exact", reduce::exact_text(s))};
  } else {
    const auto& m = s.moments;
    return {reduce::number_field("count", double(m.count)),
            reduce::text_field("sum", reduce::exact_text(s.sum)),
            reduce::text_field("min", reduce::exact_text(s.min)),
            reduce::text_field("max", reduce::exact_text(s.max)),
            reduce::number_field("sum_squares", s.sum_squares),
            reduce::number_field("mean", m.mean),
            reduce::number_field("variance", m.count > 0 ? m.m2 / m.count : 0.0)};
  }
}

// The CPU yardstick: the same operator folded element by element on one core, the median milliseconds
// of `runs` runs (0: not timed).
template <typename T, Op O>
double cpu_fold_ms(const T* x, std::int64_t n, int runs) {
  using OpT = reduce::op_t<O, T>;
  return reduce::time_cpu(runs, [&] {
    typename OpT::State s = OpT::identity();
    for (std::int64_t i = 0; i < n; ++i) s = OpT::combine(s, OpT::lift(x[i]));
    volatile double sink = shown_value<T, O>(s);
    (void)sink;
  });
}

}  // namespace step12
