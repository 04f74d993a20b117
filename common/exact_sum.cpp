#include "exact_sum.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

namespace reduce {

void ExactSum::add(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const int exponent = static_cast<int>((bits >> 23) & 0xff);
  const std::int64_t fraction = bits & 0x7fffff;
  const bool negative = bits >> 31;
  if (exponent == 0xff) {  // infinity or NaN
    if (fraction)
      ++nan_;
    else
      (negative ? neg_inf_ : pos_inf_)++;
    return;
  }
  // x = m * 2^(shift - 149): subnormals have exponent field 0 and no hidden bit.
  const std::int64_t m = exponent == 0 ? fraction : (fraction | (std::int64_t{1} << 23));
  const int shift = exponent == 0 ? 0 : exponent - 1;
  const std::int64_t v = (negative ? -m : m) * (std::int64_t{1} << (shift % 32));  // |v| < 2^55
  const std::int64_t hi = v >> 32;                                                 // floor division
  limb_[shift / 32] += v - hi * (std::int64_t{1} << 32);                           // in [0, 2^32)
  limb_[shift / 32 + 1] += hi;
  if (++pending_ >= (std::int64_t{1} << 29)) normalize();
}

void ExactSum::add(const ExactSum& other) {
  ExactSum o = other;
  o.normalize();
  normalize();
  for (int k = 0; k < kLimbs; ++k) limb_[k] += o.limb_[k];
  normalize();
  nan_ += o.nan_;
  pos_inf_ += o.pos_inf_;
  neg_inf_ += o.neg_inf_;
}

// Every limb but the top one into [0, 2^32); the top one keeps the sign (two's complement overall).
void ExactSum::normalize() {
  for (int k = 0; k + 1 < kLimbs; ++k) {
    const std::int64_t carry = limb_[k] >> 32;  // floor
    limb_[k] -= carry * (std::int64_t{1} << 32);
    limb_[k + 1] += carry;
  }
  pending_ = 0;
}

double ExactSum::rounded(int bits) const {
  ExactSum s = *this;
  s.normalize();
  const bool negative = s.limb_[kLimbs - 1] < 0;
  std::array<std::uint64_t, kLimbs> mag{};  // |value| in 32-bit digits
  std::uint64_t borrow = negative ? 1 : 0;  // two's complement negation: invert, add one
  for (int k = 0; k < kLimbs; ++k) {
    std::uint64_t d = static_cast<std::uint64_t>(s.limb_[k]) & 0xffffffffu;
    if (negative) {
      d = (~d & 0xffffffffu) + borrow;
      borrow = d >> 32;
      d &= 0xffffffffu;
    }
    mag[k] = d;
  }
  int top = kLimbs - 1;
  while (top >= 0 && mag[top] == 0) --top;
  if (top < 0) return 0.0;
  // The leading 64 bits starting at the highest set bit, and whether anything below them is set.
  const int lead = 63 - __builtin_clzll(mag[top]);  // highest set bit within the top digit
  const int msb = 32 * top + lead;                  // position of the leading bit over the whole number
  auto bit_at = [&](int pos) -> std::uint64_t { return pos < 0 ? 0 : (mag[pos / 32] >> (pos % 32)) & 1; };
  std::uint64_t keep = 0;  // the leading `bits` bits
  for (int i = 0; i < bits; ++i) keep = (keep << 1) | bit_at(msb - i);
  const int low = msb - bits;  // the first bit dropped
  const std::uint64_t half = bit_at(low);
  bool sticky = false;
  for (int pos = low - 1; pos >= 0 && !sticky; --pos) sticky = bit_at(pos);
  if (half && (sticky || (keep & 1))) ++keep;  // to nearest, ties to even (a carry to 2^bits is exact)
  const double value = std::ldexp(static_cast<double>(keep), low + 1 - 149);
  return negative ? -value : value;
}

double ExactSum::to_double() const {
  if (nan_ || (pos_inf_ && neg_inf_)) return std::numeric_limits<double>::quiet_NaN();
  if (pos_inf_) return std::numeric_limits<double>::infinity();
  if (neg_inf_) return -std::numeric_limits<double>::infinity();
  return rounded(53);
}

static float to_float_checked(double v) {
  // v has at most 24 significant bits, so this conversion is exact unless it overflows.
  return std::fabs(v) > std::numeric_limits<float>::max() ? std::copysign(std::numeric_limits<float>::infinity(), v)
                                                          : static_cast<float>(v);
}

float ExactSum::to_float() const {
  if (nan_ || (pos_inf_ && neg_inf_)) return std::numeric_limits<float>::quiet_NaN();
  if (pos_inf_) return std::numeric_limits<float>::infinity();
  if (neg_inf_) return -std::numeric_limits<float>::infinity();
  return to_float_checked(rounded(24));
}

double ExactSum::error_of(float computed) const {
  if (std::isnan(computed) || std::isinf(computed) || nan_ || pos_inf_ || neg_inf_) {
    const double exact = to_double();
    if (std::isnan(exact) && std::isnan(computed)) return 0.0;
    return exact == static_cast<double>(computed) ? 0.0 : std::numeric_limits<double>::infinity();
  }
  ExactSum diff = *this;
  diff.add(-computed);
  return std::fabs(diff.rounded(53));
}

ExactSum exact_sum(const float* x, std::int64_t n) {
  constexpr std::int64_t kChunk = std::int64_t{1} << 20;
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  const int threads = static_cast<int>(std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, 64));
  std::vector<ExactSum> partial(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w)
    pool.emplace_back([&, w] {
      for (std::int64_t c = w; c < chunks; c += threads)
        for (std::int64_t i = c * kChunk, end = std::min(n, i + kChunk); i < end; ++i) partial[w].add(x[i]);
    });
  for (auto& th : pool) th.join();
  ExactSum total;
  for (const ExactSum& p : partial) total.add(p);
  return total;
}

std::vector<Field> error_fields(const ExactSum& exact, float x, std::vector<Field> fields, const std::string& prefix) {
  const double abs_error = exact.error_of(x), e = std::fabs(exact.to_double());
  fields.push_back(number_field(prefix + "abs_error", abs_error));
  fields.push_back(number_field(prefix + "rel_error", abs_error == 0 ? 0.0 : (e > 0 ? abs_error / e : INFINITY)));
  return fields;
}

}  // namespace reduce
