// 12_types_ops's CPU reference and check: every operator over any type, as its records and tests check
// them (CPU only; the chunks and the tolerance rule are the harness's, input.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "input.hpp"
#include "ops.hpp"

namespace reduce {

// The reference for every operator over any type, in one parallel pass (and a second for the moments
// when asked): the chunks of fold_chunks, so the result does not depend on the CPU.
template <typename T>
struct TypedReference {
  std::int64_t count = 0;
  long double sum = 0, abs_sum = 0, sum_squares = 0;   // as precise as the CPU gives (x87: 64-bit mantissa)
  sum_t<T> exact_sum = 0;                              // integers: the exact sum (int64: modulo 2^64)
  T min = min_identity<T>(), max = max_identity<T>();  // min_of / max_of (ops.hpp): exact
  long double mean = 0, m2 = 0;                        // two-pass: the mean, then sum (x - mean)^2
};
template <typename T>
TypedReference<T> typed_reference(const T* x, std::int64_t n, bool moments);

// A result of op O over n elements of type T (its State, ops.hpp) against the reference.
// Exact for integers, min and max, and for float sums of the int pattern (the rule in input.hpp); float and
// double sums within tolerance_for(n, sum|x|, u) with the unit roundoff u of the accumulator; stats
// field by field: count, min and max exact, sum as a sum, the sum of squares within
// tolerance_for(n, sum x^2, u), the mean within tolerance_for(n, sum|x|, u) / n, M2 within
// 2 * tolerance_for(n, sum x^2, u) (Chan's merges add a rounding per level of the tree, bounded like
// a sum's by sum x^2 = M2 + n * mean^2). `failed` names the first field that failed.
template <typename T, Op O>
Check check_typed(const typename op_t<O, T>::State& gpu, const TypedReference<T>& ref, Pattern p,
                  std::string* failed = nullptr);

}  // namespace reduce
