// Input generation, the CPU reference, the CPU baseline and the validation rule (CPU only).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "options.hpp"

namespace reduce {

// Element i of pattern p under seed s, as a T (float, double, int32_t or int64_t; float when not
// given). Counter-based (a hash of seed and index, no sequential state), so any thread may fill any
// slice and the same (T, p, s, i) always gives the same value:
//   constant  1 everywhere (a plain float accumulator stops growing at 2^24 of these);
//   int       one of -4..-1, 1..4, mean zero: never 0, so a dropped or doubled element always moves
//             the sum, and the partial sums stay small integers that float represents exactly;
//   uniform   24-bit random floats in [0, 1) (double: 53-bit); integers: the type's whole range;
//   mixed     24-bit random floats in [-1, 1), so terms cancel (double: 53-bit); integers: [-2^20, 2^20).
// The special patterns, for the steps beyond a float sum (OptionSpec::patterns):
//   nan       mixed, with NaN at element 1 and at about one element in 65536; integers, which have
//             no NaN: the type's lowest value there;
//   inf       mixed, with +inf at element 2 and -inf at element 4, and each at about one element in
//             65536 more (integers: the type's highest / lowest value);
//   ties      floats: -0.0 or +0.0, the sign random (min must give -0, max +0); integers: -7 or 7;
//   limits    integers: within 8 of the type's lowest or highest value (an int32 sum needs its int64
//             accumulator, an int64 sum wraps); floats: random signs, magnitudes near 2^39 (double:
//             2^487), the largest whose squares still sum to a finite sum of squares for 2^36 elements.
// The distributions of many scales (for floats and doubles; integer types take mixed's values), each
// computed in double and rounded once, with the sign random except for lognormal:
//   normal     normal(0, 1), by Box-Muller;
//   lognormal  exp(normal(0, 3)): positive, about 26 binades wide at +-3 sigma;
//   logu40     2^u for u uniform in [-20, 20): log-uniform over 40 binades;
//   logu120    the same over [-60, 60): 120 binades;
//   wide       every binade alike, the subnormals to 2^91 (a float's random bits with the biased exponent
//              uniform in 0..217), so a sum of 2^36 of them stays finite;
//   outliers   mixed, with one element in 10^4 replaced by +-1e30;
//   products   the product of two logu40 values: 80 binades, most near 1.
template <typename T = float>
T pattern_value(Pattern p, std::uint64_t seed, std::int64_t i);

// Fills out[0..n) in parallel on the CPU's cores.
template <typename T>
void fill_input(T* out, std::int64_t n, Pattern p, std::uint64_t seed);
// The same for a slice of a longer array: out[i] = element first + i, for i in [0, n). A program that
// spreads one array over several GPUs fills each GPU's shard by itself.
template <typename T>
void fill_input_at(T* out, std::int64_t first, std::int64_t n, Pattern p, std::uint64_t seed);

// Runs body(begin, end) over [0, n) split into contiguous slices, one per hardware thread.
void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& body);

// The one reduction of the CPU references: x[0..n) in fixed chunks of kReferenceChunk elements, each
// folded into an Acc of its own by add(acc, x[i]) on one of the CPU's threads, then the chunks' Accs
// merged in order by merge(total, chunk): the result does not depend on the number of threads.
constexpr std::int64_t kReferenceChunk = std::int64_t{1} << 16;
template <typename T, typename Acc, typename Add, typename Merge>
Acc fold_chunks(const T* x, std::int64_t n, const Acc& init, Add add, Merge merge) {
  const std::int64_t chunks = (n + kReferenceChunk - 1) / kReferenceChunk;
  std::vector<Acc> part(static_cast<std::size_t>(chunks), init);
  parallel_for(chunks, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c)
      for (std::int64_t i = c * kReferenceChunk, e = std::min(n, (c + 1) * kReferenceChunk); i < e; ++i)
        add(part[c], x[i]);
  });
  Acc total = init;
  for (const Acc& p : part) merge(total, p);
  return total;
}

// The reference: the exact-as-possible sum in double, plus sum |x| (it scales the tolerance).
// Fixed 64K-element chunks, each summed in double, chunk sums added in order: the result does not
// depend on the number of CPU threads, and is exact for the int pattern (integers below 2^53).
struct Reference {
  double sum = 0.0;
  double abs_sum = 0.0;
};
Reference reference_sum(const float* x, std::int64_t n);

// The speedup baseline: the plain loop `float s = 0; for (...) s += x[i];` on one core, as a student
// would write it first. Compiled without fast-math, so the compiler keeps the serial order and
// cannot vectorize it. Returns the median milliseconds of `runs` runs (the sum goes to *result).
double time_cpu_sum(const float* x, std::int64_t n, int runs, float* result);

// The honest CPU yardstick: every core, each summing its slice with SIMD (an OpenMP
// `parallel for simd reduction`), the way a tuned CPU library would. Returns the median milliseconds
// of `runs` runs; *threads gets the thread count (1 where the build has no OpenMP).
double time_cpu_sum_parallel(const float* x, std::int64_t n, int runs, float* result, int* threads);

// Validation rule.
// Exact: the int pattern, whose sum is an integer; every partial sum any summation order forms is a
// sum of a subset of values in -4..4 with mean zero, which stays far below 2^24 (a random walk grows
// like sqrt(n)), so float arithmetic on it is exact and the GPU must match to the last bit.
// Otherwise: |gpu - ref| <= tolerance, with tolerance = u * L * sum|x|, u = 2^-24 (float's unit
// roundoff), L = 2*sqrt(n) + 64. Rounding error of any summation whose longest chain of additions is
// L is at most about u * L * sum|x| (Higham, Accuracy and Stability of Numerical Algorithms, 4.2).
// The tree steps' chains are log2(n) long and grid-stride steps' about n/T + log2(T) for T resident
// threads, both under 2*sqrt(n) + 64 at every size this suite runs; a serial sum's chain is n.
// NaN or infinity never passes.
struct Check {
  bool exact = false;      // compared for equality
  double tolerance = 0.0;  // allowed |gpu - ref|
  double abs_error = 0.0;
  bool passed = false;
};
double tolerance_for(std::int64_t n, double abs_sum, double unit_roundoff = 0x1.0p-24);
// An exact comparison is fair when the int pattern's integer sum stays below 2^digits of the accumulator.
bool exact_sum_is_fair(Pattern p, long double sum, int digits);
bool uses_exact_check(Pattern p, const Reference& ref);
Check check_result(float gpu, const Reference& ref, std::int64_t n, Pattern p);

// One run's result against its reference.
struct Verdict {
  Verdict() = default;
  Verdict(const Check& c, double result_, double reference_, std::string what_ = "")
      : passed(c.passed), result(result_), reference(reference_), check(c), what(std::move(what_)) {}
  // A float sum against the double reference (check_result).
  Verdict(float x, const Reference& ref, std::int64_t n, Pattern p) : Verdict(check_result(x, ref, n, p), x, ref.sum) {}
  bool passed = false;
  double result = 0.0, reference = 0.0;  // as the record shows them (stats: the mean)
  Check check;                           // |error|, tolerance and whether exact
  std::string what;                      // what was wrong when it failed ("the min", "segment 7 [70, 80)")
  std::string note;                      // context for the message ("bits 0x3f800001, the model's 0x3f800000")
};

// The unit roundoff of the type a result is computed in: 2^-24 for float, 2^-53 for double.
template <typename R>
constexpr double unit_roundoff() {
  return std::is_same_v<R, float> ? 0x1.0p-24 : 0x1.0p-53;
}

// One value against its reference. Exact: bitwise equal, or both NaN (-0 and +0 differ). Otherwise:
// a NaN or infinite reference must be matched as it is (an input with NaN or inf sums to NaN or inf);
// a finite one within the tolerance, and then NaN and inf never pass.
Check check_value(long double gpu, long double ref, bool exact, double tolerance);

}  // namespace reduce
