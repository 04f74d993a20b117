// The exact sum of floats on the CPU, rounded once: the yardstick of 14_reproducible's accuracy table
// and the oracle of 15_exact's tests. Every float is an integer multiple of 2^-149 below 2^128, so a fixed-point
// integer with its lowest bit worth 2^-149 holds any float exactly, and integer additions lose nothing and do not
// depend on their order: the sum is exact whatever the grouping, on any number of threads.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "report.hpp"  // Field

namespace reduce {

class ExactSum {
 public:
  void add(float x);
  void add(const ExactSum& other);
  // The exact sum rounded once to nearest (ties to even). NaN when any term was NaN or when both
  // infinities occurred; an infinity when only that one did (IEEE addition's rules, without overflow:
  // finite terms never overflow here, their exact sum is rounded at the end).
  double to_double() const;
  float to_float() const;  // correctly rounded to float: an exact sum beyond float's range gives an infinity
  // |computed - exact sum|, rounded once: the exact absolute error of a result.
  double error_of(float computed) const;

 private:
  // 32-bit digits in int64 limbs, least significant first; limb k is worth 2^(32k - 149). Floats need
  // 277 bits; 12 limbs leave room for carries. Digits grow by less than 2^33 per add, so limbs are
  // normalized (carries moved up) every 2^29 adds, far from int64's limit.
  static constexpr int kLimbs = 12;
  std::array<std::int64_t, kLimbs> limb_{};
  std::int64_t pending_ = 0;  // adds since the last normalization
  std::int64_t nan_ = 0, pos_inf_ = 0, neg_inf_ = 0;
  void normalize();
  double rounded(int bits) const;  // the exact value rounded to `bits` significant bits, as a double
};

// `fields`, then a result's error against the exact sum as record fields: <prefix>abs_error, |x - exact|,
// and <prefix>rel_error, that over |exact| (0 when both are 0, inf when only the exact sum is 0).
std::vector<Field> error_fields(const ExactSum& exact, float x, std::vector<Field> fields = {},
                                const std::string& prefix = "");

// The exact sum of x[0..n), on all CPU cores (fixed chunks; the result cannot depend on them anyway).
ExactSum exact_sum(const float* x, std::int64_t n);

}  // namespace reduce
