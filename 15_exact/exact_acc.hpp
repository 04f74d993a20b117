// The exact accumulator of step 15 and its one rounding, shared by the GPU kernels (exact.cu) and the
// CPU (tests, the multi-GPU step): plain C++ that nvcc also compiles for the device.
//
// A finite float is an integer multiple of 2^-149 below 2^128, so a sum of floats is an integer in
// units of 2^-149. Acc holds it in carry-save form: limb k is a signed 64-bit count of 2^(32k - 149),
// and the value is sum limb[k] * 2^(32k - 149). Adding two Accs word by word adds their values, in any
// order, on any number of threads or GPUs: integer addition is associative. NaN and the infinities are
// counted apart, so IEEE's rules can be applied once at the end. The tests' oracle, the harness's
// reduce::ExactSum (common/exact_sum.hpp), holds the same integer but rounds it bit by bit: a second,
// independent reading of the same number, so that the two roundings check each other.
//
//   limb:   11        10                    1          0
//         [ sign... | 2^171 .. 2^202 | ... | 2^-117 .. | 2^-149 .. 2^-118 ]   + nan, +inf, -inf counts
//
// Normalized: limbs 0 .. kLimbs-2 in [0, 2^32), the top limb signed (two's complement over all). The
// largest float sum of fewer than 2^64 terms is below 2^192, so the top limb is 0 or -1; elementwise
// sums of up to 2^20 normalized Accs stay far from int64's limits.
#pragma once

#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define EXACT_HD __host__ __device__
#define EXACT_UNROLL _Pragma("unroll")
#else
#define EXACT_HD
#define EXACT_UNROLL
#endif

namespace step15 {

constexpr int kLimbs = 12;             // 384 bits: 277 for any float, the rest for carries and sign
constexpr int kAccWords = kLimbs + 3;  // the int64 words of an Acc (an NCCL all-reduce counts these)

struct Acc {
  long long limb[kLimbs];
  long long nan, pos_inf, neg_inf;
};
static_assert(sizeof(Acc) == kAccWords * sizeof(long long), "Acc must be plain int64 words");

// Moves every limb's carries up: limbs 0 .. kLimbs-2 into [0, 2^32). The value does not change.
EXACT_HD inline void normalize(Acc& a) {
  for (int k = 0; k + 1 < kLimbs; ++k) {
    const long long carry = a.limb[k] >> 32;  // floor division by 2^32 (arithmetic shift)
    a.limb[k] &= 0xffffffffLL;
    a.limb[k + 1] += carry;
  }
}

// Adds one float exactly (the CPU's way; the kernels add whole windows at a time).
EXACT_HD inline void add(Acc& a, float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const int e = static_cast<int>((u >> 23) & 0xff);
  const long long f = u & 0x7fffff;
  if (e == 0xff) {
    if (f)
      ++a.nan;
    else
      (u >> 31 ? a.neg_inf : a.pos_inf)++;
    return;
  }
  const long long m = e ? (f | 0x800000) : f;  // x = m * 2^(s - 149), subnormals without the hidden bit
  const int s = e ? e - 1 : 0;
  const long long v = (m << (s % 32)) * (u >> 31 ? -1 : 1);  // |v| < 2^55
  a.limb[s / 32] += v & 0xffffffffLL;
  a.limb[s / 32 + 1] += v >> 32;  // floor: the two parts add up to v
}

// The bits of the float nearest to the exact value (ties to even), with IEEE's rules for the special
// values: NaN when a NaN was added or both infinities were; an infinity when only it was; a finite sum
// beyond float's range rounds to an infinity. An exact zero gives +0 (as Python's math.fsum does).
EXACT_HD inline std::uint32_t rounded_bits(Acc a) {
  if (a.nan || (a.pos_inf && a.neg_inf)) return 0x7fc00000u;
  if (a.pos_inf) return 0x7f800000u;
  if (a.neg_inf) return 0xff800000u;
  normalize(a);
  const bool negative = a.limb[kLimbs - 1] < 0;
  std::uint32_t mag[kLimbs];                // |value| in 32-bit digits
  std::uint64_t borrow = negative ? 1 : 0;  // two's complement negation: invert, add one
  EXACT_UNROLL for (int k = 0; k < kLimbs; ++k) {
    std::uint64_t d = static_cast<std::uint64_t>(a.limb[k]) & 0xffffffffu;
    if (negative) {
      d = (~d & 0xffffffffu) + borrow;
      borrow = d >> 32;
    }
    mag[k] = static_cast<std::uint32_t>(d);
  }
  // One pass up the digits: the top nonzero one, the two below it, and whether any digit below those three
  // is nonzero. Every index is a constant of an unrolled loop, so one GPU thread keeps mag in registers
  // (a computed index would put it in local memory) and no step waits on a 12-way select.
  int top = -1;
  std::uint32_t d2 = 0, d1 = 0, d0 = 0;  // mag[top], mag[top - 1], mag[top - 2] (0 below digit 0)
  bool rest = false, below = false;      // a nonzero digit under d0; any of mag[0 .. k - 3] nonzero
  EXACT_UNROLL for (int k = 0; k < kLimbs; ++k) {
    if (k >= 3) below |= mag[k - 3] != 0;
    if (mag[k]) {
      top = k;
      d2 = mag[k];
      d1 = k >= 1 ? mag[k - 1] : 0;
      d0 = k >= 2 ? mag[k - 2] : 0;
      rest = below;
    }
  }
  if (top < 0) return 0u;
#ifdef __CUDA_ARCH__
  const int lead = 31 - __clz(d2);  // d2's leading bit
#else
  const int lead = 31 - __builtin_clz(d2);
#endif
  const int msb = 32 * top + lead;          // the leading bit, worth 2^(msb - 149)
  const int low = msb > 23 ? msb - 23 : 0;  // the last bit kept: 24 bits, or down to 2^-149 (subnormal)
  // hi = d2:d1, its bit j worth 2^(32 (top - 1) + j - 149); the kept bits start at bit `shift` of it, 9 to 40
  // (9 + lead from digit 1 up; 32 + low, at most 40, when the top is digit 0).
  const std::uint64_t hi = static_cast<std::uint64_t>(d2) << 32 | d1;
  const int shift = low - 32 * (top - 1);
  std::uint64_t keep = hi >> shift;
  const bool half = hi >> (shift - 1) & 1;  // the bit under the last one kept: half an ulp
  const bool beyond = (hi & ((std::uint64_t{1} << (shift - 1)) - 1)) || d0 || rest;  // any bit under that one
  if (half && ((keep & 1) || beyond))
    ++keep;  // above half an ulp, or an exact half with keep odd: up (keep may reach 2^24: see below)
  // keep * 2^(low - 149): low = 0 gives the subnormal (or smallest-normal) bits directly; above, the
  // biased exponent is low + 1 and keep's leading bit is the hidden one, so the bits are
  // (low << 23) + keep.
  std::uint64_t bits = (static_cast<std::uint64_t>(low) << 23) + keep;
  if (bits >= 0x7f800000u) bits = 0x7f800000u;  // beyond float's range: an infinity
  return static_cast<std::uint32_t>(bits) | (negative ? 0x80000000u : 0u);
}

EXACT_HD inline float rounded(const Acc& a) {
  const std::uint32_t u = rounded_bits(a);
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

}  // namespace step15
