#include "cases.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

namespace step15 {

namespace {

// n floats m x 2^e with random signs, 24-bit m and e uniform over every exponent (subnormals included).
std::vector<float> whole_range(int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<float> x(n);
  for (float& v : x) {
    const int e = std::uniform_int_distribution<int>(-149, 104)(gen);
    const float m = static_cast<float>(std::uniform_int_distribution<int>(0, (1 << 24) - 1)(gen));
    v = std::ldexp(gen() & 1 ? -m : m, e);
  }
  return x;
}

std::string hex(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%a", static_cast<double>(v));
  return buf;
}

}  // namespace

std::vector<Case> fsum_cases() {
  const float max = std::numeric_limits<float>::max(), tiny = std::numeric_limits<float>::denorm_min();
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<Case> c = {
      {"empty", {}},
      {"one", {1.0f}},
      {"order_three", {1e8f, 1.0f, -1e8f}},  // a float loop from the left gives 0
      {"cancel_1e38", {1e38f, 1.0f, -1e38f}},
      {"cancel_to_subnormal", {3e38f, 3e38f, -3e38f, -3e38f, tiny}},
      {"tie_to_even_down", {1.0f, 0x1p-24f}},           // halfway: the even neighbour, 1
      {"tie_to_even_up", {1.0f + 0x1p-23f, 0x1p-24f}},  // halfway: the even neighbour is above
      {"tie_broken_by_2^-149", {1.0f, 0x1p-24f, tiny}},
      {"tie_negative", {-1.0f, -0x1p-24f}},
      {"double_rounding", {1.0f, 0x1p-24f, 0x1p-60f}},  // math.fsum's double is the tie 1 + 2^-24
      {"subnormals", {tiny, tiny, tiny}},
      {"subnormal_result", {0x1p-126f, -tiny}},
      {"zero_signs", {-0.0f, -0.0f}},  // an exact zero is +0, as math.fsum gives
      {"overflow", {max, max}},
      {"overflow_undone", {max, max, -max}},
      {"tie_at_the_top", {max, 0x1p103f}},  // halfway to 2^128: rounds to infinity
      {"below_the_top_tie", {max, 0x1p102f}},
      {"negative_overflow", {-max, -0x1p103f}},
      {"nan", {1.0f, nan, 2.0f}},
      {"plus_inf", {1.0f, inf, -max}},
      {"minus_inf", {-inf, max, max}},
      {"both_infinities", {inf, 1.0f, -inf}},
  };
  std::vector<float> pairs = whole_range(2000, 7);  // x and -x in shuffled order, and one small term
  for (int i = 0; i < 2000; ++i) pairs.push_back(-pairs[i]);
  pairs.push_back(0x1.8p-140f);
  std::shuffle(pairs.begin(), pairs.end(), std::mt19937(8));
  c.push_back({"cancelling_pairs_4001", pairs});
  c.push_back({"whole_range_4099", whole_range(4099, 1)});
  c.push_back({"whole_range_257", whole_range(257, 2)});
  std::vector<float> ones(8192, 1.0f);  // and as many 2^-24: a float loop ties at every step
  for (int i = 0; i < 8192; ++i) ones.push_back(0x1p-24f);
  c.push_back({"ones_and_halves_16384", ones});
  std::mt19937 gen(3);
  std::vector<float> u(10007);
  for (float& v : u) v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(gen);
  c.push_back({"mixed_10007", u});
  return c;
}

std::string cases_text(const std::vector<Case>& cases, const std::vector<float>& results) {
  std::string s =
      "# 15_exact --write-cases: name, the GPU's exact sum rounded to float, then the inputs (hex floats)\n";
  for (std::size_t k = 0; k < cases.size(); ++k) {
    s += cases[k].name + " " + hex(results[k]);
    for (float v : cases[k].x) s += " " + hex(v);
    s += "\n";
  }
  return s;
}

}  // namespace step15
