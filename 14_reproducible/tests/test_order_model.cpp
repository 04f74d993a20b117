// The CPU model of step 14's order (order.hpp) and the committed bits file. CPU only: the model gives
// the bits every GPU must give, so the file can be checked on any machine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "14_reproducible/bits.hpp"
#include "14_reproducible/order.hpp"
#include "exact_sum.hpp"
#include "input.hpp"
#include "tests/usage_error.hpp"  // TempFolder

namespace {

TEST(Order, TileSizeDependsOnNOnly) {
  EXPECT_EQ(step14::tile_elements(0), 8192);
  EXPECT_EQ(step14::tile_elements(1), 8192);
  EXPECT_EQ(step14::tile_elements(std::int64_t{1} << 23), 8192);
  EXPECT_EQ(step14::tile_elements((std::int64_t{1} << 23) + 1), 16384);
  EXPECT_EQ(step14::tile_elements(std::int64_t{1} << 26), 65536);
  EXPECT_EQ(step14::tile_elements(std::int64_t{1} << 30), 1 << 20);
  EXPECT_EQ(step14::tile_elements(std::int64_t{1} << 36), 1 << 20);
  EXPECT_EQ(step14::slice_elements(std::int64_t{1} << 26), 4096);
  EXPECT_EQ(step14::num_tiles(0), 0);
  EXPECT_EQ(step14::num_tiles(8193), 2);
  EXPECT_EQ(step14::num_tiles(std::int64_t{1} << 30), 1024);
  // From 2^23 to 2^30 elements, 2^9 to 2^10 tiles: few tile sums for the last block to read, and about
  // two tiles or more for each block of a 132-SM GPU.
  for (int k = 24; k <= 30; ++k)
    for (std::int64_t n : {(std::int64_t{1} << k) - 1, std::int64_t{1} << k, (std::int64_t{1} << k) + 1}) {
      if (n > (std::int64_t{1} << 30)) continue;  // past 2^30 the tile size stays and the count grows
      EXPECT_GE(step14::num_tiles(n), 1 << 9) << n;
      EXPECT_LE(step14::num_tiles(n), 1 << 10) << n;
    }
}

TEST(Order, ModelIsExactOnIntegers) {
  // Small integers: every order gives the exact sum, so the model must.
  for (std::int64_t n : {0, 1, 31, 1023, 1024, 1025, 4097, 100003, (1 << 20) + 3}) {
    std::vector<float> x(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
    reduce::fill_input(x.data(), n, reduce::Pattern::integers, 3);
    EXPECT_EQ(step14::model_sum(x.data(), n), reduce::exact_sum(x.data(), n).to_float()) << "n=" << n;
  }
}

TEST(Order, ModelOfOneElementIsThatElement) {
  for (float v : {1.5f, -3.25f, 1e-40f}) EXPECT_EQ(step14::model_sum(&v, 1), v);
}

// A fixed tree of short chains is accurate: on the mixed pattern (terms cancel), the model's error is
// within a few units of the last place of sum |x|, far below a serial loop's bound.
TEST(Order, ModelIsAccurateOnCancellingData) {
  const std::int64_t n = (1 << 22) + 5;
  std::vector<float> x(n);
  reduce::fill_input(x.data(), n, reduce::Pattern::mixed, 11);
  const reduce::ExactSum exact = reduce::exact_sum(x.data(), n);
  double abs_sum = 0;
  for (float v : x) abs_sum += std::fabs(v);
  const double error = exact.error_of(step14::model_sum(x.data(), n));
  // Longest chain: 128 rounds (2 + 127) + 1 lane sum (2) + 5 shuffles + 4 slice levels + column chain
  // (4) + 10 levels; at this n (slices of 2^9): 2 + 2 + 5 + 4 + 2 + 10.
  EXPECT_LE(error, 0x1p-24 * 32 * abs_sum);
}

// The committed file: the model gives its bits for every case up to 2^25 + 7 elements (the larger
// ones take the CPU too long here; the GPU test and 14_reproducible_bits --check cover all).
TEST(BitsFile, ModelGivesTheCommittedBits) {
  const auto entries = step14::read_bits_file(REPRO_BITS_FILE);
  ASSERT_EQ(entries.size(), step14::bits_cases().size())
      << REPRO_BITS_FILE << " does not hold every case of bits_cases()";
  int checked = 0;
  for (const auto& e : entries) {
    if (e.c.n > (1 << 25) + 7) continue;
    std::unique_ptr<float[]> x(new float[std::max<std::int64_t>(e.c.n, 1)]);
    reduce::fill_input(x.get(), e.c.n, e.c.pattern, e.c.seed);
    EXPECT_EQ(step14::bits_text(step14::model_sum(x.get(), e.c.n)), e.bits)
        << "n=" << e.c.n << " pattern=" << reduce::to_string(e.c.pattern) << " seed=" << e.c.seed;
    ++checked;
  }
  EXPECT_GT(checked, 40);
}

TEST(BitsFile, RefusesAMalformedLine) {
  const TempFolder folder;
  const std::string path = folder / "bad_bits.txt";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("# comment\nn pattern seed bits value\n5 uniform 1 0x3f80 1\n", f);
  std::fclose(f);
  EXPECT_THROW(step14::read_bits_file(path), std::runtime_error);
  EXPECT_THROW(step14::read_bits_file(path + ".missing"), std::runtime_error);
}

TEST(BitsFile, TextOfBits) {
  EXPECT_EQ(step14::bits_text(1.0f), "0x3f800000");
  EXPECT_EQ(step14::bits_text(-0.0f), "0x80000000");
  EXPECT_EQ(step14::bits_text(std::nanf("")), "nan");
}

}  // namespace
