// Input generation, the CPU reference, the CPU baseline and the validation rule (CPU only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "options.hpp"

namespace reduce {

// Element i of pattern p under seed s. Counter-based (a hash of seed and index, no sequential state),
// so any thread may fill any slice and the same (p, s, i) always gives the same value:
//   constant  1.0f everywhere (a plain float accumulator stops growing at 2^24 of these);
//   int       one of -4..-1, 1..4, mean zero: never 0, so a dropped or doubled element always moves
//             the sum, and the partial sums stay small integers that float represents exactly;
//   uniform   24-bit random floats in [0, 1);
//   mixed     24-bit random floats in [-1, 1), so terms cancel.
float pattern_value(Pattern p, std::uint64_t seed, std::int64_t i);

// Fills out[0..n) in parallel on the CPU's cores.
void fill_input(float* out, std::int64_t n, Pattern p, std::uint64_t seed);
// The same for a slice of a longer array: out[i] = element first + i, for i in [0, n). A program that
// spreads one array over several GPUs fills each GPU's shard by itself.
void fill_input_at(float* out, std::int64_t first, std::int64_t n, Pattern p, std::uint64_t seed);

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
  bool exact = false;       // compared for equality
  double tolerance = 0.0;   // allowed |gpu - ref|
  double abs_error = 0.0;
  bool passed = false;
};
double tolerance_for(std::int64_t n, double abs_sum);
bool uses_exact_check(Pattern p, const Reference& ref);
Check check_result(float gpu, const Reference& ref, std::int64_t n, Pattern p);

}  // namespace reduce
