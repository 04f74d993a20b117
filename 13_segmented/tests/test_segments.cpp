// 13_segmented's CPU side: offsets validation (every bad case), the distributions (lengths cover n,
// lie in their ranges, the same for the same seed), and the per-segment reference and check.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "13_segmented/segments.hpp"
#include "tests/usage_error.hpp"  // TempFolder

namespace {

using step13::Offsets;

std::string validation_error(const Offsets& o, std::int64_t n) {
  try {
    step13::validate_offsets(o, n);
  } catch (const reduce::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(SegmentedOffsets, AcceptsValidOnes) {
  EXPECT_EQ(validation_error({0}, 0), "");  // S = 0
  EXPECT_EQ(validation_error({3}, 3), "");  // S = 0 at the end of the array
  EXPECT_NE(validation_error({5}, 3).find("beyond"), std::string::npos);
}

TEST(SegmentedOffsets, RefusesEveryBadCase) {
  EXPECT_NE(validation_error({}, 10).find("no entries"), std::string::npos);
  EXPECT_NE(validation_error({-1, 4}, 10).find("negative"), std::string::npos);
  EXPECT_NE(validation_error({0, 5, 4, 8}, 10).find("offsets[2] = 4 < offsets[1] = 5"), std::string::npos);
  EXPECT_NE(validation_error({0, 5, 11}, 10).find("offsets[2] = 11 is beyond n = 10"), std::string::npos);
  EXPECT_NE(validation_error({0, std::int64_t{1} << 40}, std::int64_t{1} << 33).find("beyond"), std::string::npos);
  for (const Offsets& bad : {Offsets{}, Offsets{-1, 4}, Offsets{0, 5, 4, 8}, Offsets{0, 5, 11}})
    EXPECT_EQ(validation_error(bad, 10).find('\n'), std::string::npos) << "one line";
}

TEST(SegmentedOffsets, AcceptsEmptySegmentsAndAnOffsetStart) {
  EXPECT_EQ(validation_error({0, 0, 0, 3, 3, 10}, 10), "");
  EXPECT_EQ(validation_error({2, 2, 7}, 10), "");  // floats before offsets[0] and after offsets[S] belong to none
  EXPECT_EQ(validation_error({0, std::int64_t{3} << 30}, std::int64_t{3} << 30), "");  // 64-bit throughout
}

TEST(SegmentedOffsets, ReadsAFile) {
  const TempFolder folder;
  const std::string path = folder / "seg_offsets.txt";
  std::ofstream(path) << "0 3\n3\n  8589934592\n";
  const std::int64_t n = std::int64_t{1} << 33;
  EXPECT_EQ(step13::read_offsets(path, n), (Offsets{0, 3, 3, n}));
  std::ofstream(path) << "0 3 x\n";
  EXPECT_THROW(step13::read_offsets(path, n), reduce::UsageError);
  EXPECT_THROW(step13::read_offsets(path + ".missing", n), reduce::UsageError);
}

// Lengths of every segment but the last (which takes what is left) must lie in [lo, hi].
void expect_lengths(const Offsets& o, std::int64_t lo, std::int64_t hi) {
  for (std::size_t s = 0; s + 2 < o.size(); ++s) {
    const std::int64_t len = o[s + 1] - o[s];
    ASSERT_TRUE(len >= lo && len <= hi) << "segment " << s << " has length " << len;
  }
}

class Distributions : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(Distributions, CoverNAndAreValid) {
  const std::int64_t n = GetParam();
  for (const step13::Distribution& d : step13::distributions()) {
    const Offsets o = step13::make_offsets(d.name, n, 7);
    SCOPED_TRACE(d.name);
    EXPECT_EQ(o.front(), 0);
    EXPECT_EQ(o.back(), n);
    EXPECT_EQ(validation_error(o, n), "");
    EXPECT_EQ(o, step13::make_offsets(d.name, n, 7)) << "the same seed gives the same offsets";
  }
}

TEST_P(Distributions, LengthsLieInTheirRanges) {
  const std::int64_t n = GetParam();
  expect_lengths(step13::make_offsets("uniform32", n, 3), 1, 32);
  expect_lengths(step13::make_offsets("fixed1000", n, 3), 1000, 1000);
  expect_lengths(step13::make_offsets("matrix-tall", n, 3), 1024, 1024);
  expect_lengths(step13::make_offsets("powerlaw", n, 3), 0, 10000000 - 1);
  const Offsets wide = step13::make_offsets("matrix-wide", n, 3);
  EXPECT_EQ(wide.size(), 1025u);
  expect_lengths(wide, n / 1024, n / 1024 + 1);
  const Offsets hundred = step13::make_offsets("hundred", n, 3);
  EXPECT_EQ(hundred.size(), 101u);
  if (n >= 100000) expect_lengths(hundred, n / 100 * 8 / 10 - 1, n / 100 * 12 / 10 + 1);
  EXPECT_EQ(step13::make_offsets("whole", n, 3), (Offsets{0, n}));
}

INSTANTIATE_TEST_SUITE_P(Sizes, Distributions,
                         ::testing::Values(std::int64_t{1000003}, std::int64_t{1} << 24, std::int64_t{1} << 28));

TEST(SegmentedDistributions, MatchTheIssueAt2To28) {
  const std::int64_t n = std::int64_t{1} << 28;
  const Offsets wide = step13::make_offsets("matrix-wide", n, 1), tall = step13::make_offsets("matrix-tall", n, 1);
  EXPECT_EQ(wide.size() - 1, 1024u);
  EXPECT_EQ(wide[1], std::int64_t{1} << 18);
  EXPECT_EQ(tall.size() - 1, std::size_t{1} << 18);
  expect_lengths(Offsets(tall.begin(), tall.end()), 1024, 1024);
  EXPECT_EQ(tall[tall.size() - 1] - tall[tall.size() - 2], 1024);
}

TEST(SegmentedDistributions, PowerLawHasEmptyAndLongSegmentsAndSeedsDiffer) {
  const std::int64_t n = std::int64_t{1} << 28;
  const Offsets o = step13::make_offsets("powerlaw", n, 1);
  std::int64_t empty = 0, longest = 0;
  for (std::size_t s = 0; s + 1 < o.size(); ++s) {
    empty += o[s + 1] == o[s];
    longest = std::max(longest, o[s + 1] - o[s]);
  }
  EXPECT_GT(empty, 0);
  EXPECT_GT(longest, 1000000);
  EXPECT_NE(o, step13::make_offsets("powerlaw", n, 2));
  EXPECT_NE(step13::make_offsets("uniform32", 100000, 1), step13::make_offsets("uniform32", 100000, 2));
}

TEST(SegmentedDistributions, UnknownNameIsUsageError) {
  EXPECT_THROW(step13::make_offsets("zipf", 100, 1), reduce::UsageError);
  EXPECT_EQ(step13::find_distribution("zipf"), nullptr);
  EXPECT_NE(step13::find_distribution("powerlaw"), nullptr);
}

TEST(SegmentedDistributions, ZeroFloatsGiveNoSegmentsOrEmptyOnes) {
  for (const step13::Distribution& d : step13::distributions()) {
    const Offsets o = step13::make_offsets(d.name, 0, 1);
    EXPECT_EQ(validation_error(o, 0), "") << d.name;
  }
}

TEST(SegmentedReference, PerSegmentSumsAndTolerance) {
  const std::vector<float> x = {1.0f, -2.0f, 3.0f, 0.5f, 4.0f};
  const reduce::Reference r = step13::segment_reference(x.data(), 1, 4);
  EXPECT_DOUBLE_EQ(r.sum, 1.5);
  EXPECT_DOUBLE_EQ(r.abs_sum, 5.5);
  const reduce::Reference e = step13::segment_reference(x.data(), 2, 2);
  EXPECT_EQ(e.sum, 0.0);
  EXPECT_EQ(e.abs_sum, 0.0);
}

TEST(SegmentedReference, LongSegmentsMatchTheSerialSum) {
  const std::int64_t n = (std::int64_t{1} << 20) + 5;
  std::vector<float> x(n);
  reduce::fill_input(x.data(), n, reduce::Pattern::integers, 3);
  double s = 0.0;
  for (float v : x) s += v;
  EXPECT_EQ(step13::segment_reference(x.data(), 0, n).sum, s);
}

TEST(SegmentedCheck, ExactForIntsTolerantOtherwiseNeverNaN) {
  std::vector<float> x(64);
  reduce::fill_input(x.data(), 64, reduce::Pattern::integers, 1);
  const Offsets o = {0, 0, 10, 64};
  std::vector<float> gpu(3);
  for (std::size_t s = 0; s < 3; ++s)
    gpu[s] = static_cast<float>(step13::segment_reference(x.data(), o[s], o[s + 1]).sum);
  step13::SegmentsCheck c = step13::check_segments(x.data(), o, gpu.data(), reduce::Pattern::integers);
  EXPECT_EQ(c.wrong, 0);
  EXPECT_TRUE(c.exact);
  gpu[2] += 1.0f;  // one element doubled or dropped
  c = step13::check_segments(x.data(), o, gpu.data(), reduce::Pattern::integers);
  EXPECT_EQ(c.wrong, 1);
  EXPECT_EQ(c.first_wrong, 2);
  gpu[2] -= 1.0f;
  gpu[0] = NAN;  // an empty segment must give 0, not NaN
  EXPECT_EQ(step13::check_segments(x.data(), o, gpu.data(), reduce::Pattern::integers).first_wrong, 0);

  reduce::fill_input(x.data(), 64, reduce::Pattern::uniform, 1);
  const reduce::Reference r = step13::segment_reference(x.data(), 10, 64);
  gpu = {0.0f, static_cast<float>(step13::segment_reference(x.data(), 0, 10).sum), static_cast<float>(r.sum)};
  EXPECT_EQ(step13::check_segments(x.data(), o, gpu.data(), reduce::Pattern::uniform).wrong, 0);
  EXPECT_DOUBLE_EQ(step13::check_segments(x.data(), o, gpu.data(), reduce::Pattern::uniform).first_check.tolerance,
                   0.0);
  gpu[2] = static_cast<float>(r.sum + 2 * reduce::tolerance_for(54, r.abs_sum));
  c = step13::check_segments(x.data(), o, gpu.data(), reduce::Pattern::uniform);
  EXPECT_EQ(c.wrong, 1);
  EXPECT_DOUBLE_EQ(c.first_check.tolerance, reduce::tolerance_for(54, r.abs_sum));  // the segment's own length
}

TEST(SegmentedFixedSize, OffsetsOfWholeSegmentsOnly) {
  EXPECT_EQ(step13::fixed_offsets(10, 3), (Offsets{0, 3, 6, 9}));  // the 10th float belongs to no segment
  EXPECT_EQ(step13::fixed_offsets(32, 16), (Offsets{0, 16, 32}));
  EXPECT_EQ(step13::fixed_offsets(5, 5), (Offsets{0, 5}));
  EXPECT_EQ(step13::fixed_offsets(4, 5), (Offsets{0}));
  EXPECT_EQ(validation_error(step13::fixed_offsets(1000003, 1024), 1000003), "");
}

TEST(SegmentedFixedSize, EqualLengthOnlyWhenEverySegmentHasIt) {
  EXPECT_EQ(step13::equal_length(step13::fixed_offsets(100, 7)), 7);
  EXPECT_EQ(step13::equal_length({3, 10, 17}), 7);  // from an offset start too
  EXPECT_EQ(step13::equal_length({0, 7, 14, 20}), 0);
  EXPECT_EQ(step13::equal_length({0}), 0);
  EXPECT_EQ(step13::equal_length({0, 0, 0}), 0);  // empty segments: no fixed size to give CUB
  EXPECT_EQ(step13::equal_length(step13::make_offsets("matrix-tall", std::int64_t{1} << 20, 1)), 1024);
  EXPECT_EQ(step13::equal_length(step13::make_offsets("fixed1000", 1000003, 1)), 0);  // the last one is shorter
}

// The README names every distribution (so a new one cannot go undocumented) and holds the demo table's
// block (the full tables are in docs/results.md).
TEST(SegmentedReadme, NamesEveryDistributionAndHasTheDemoBlock) {
  std::ifstream f(SEG_README);
  ASSERT_TRUE(f) << SEG_README;
  std::stringstream text;
  text << f.rdbuf();
  for (const step13::Distribution& d : step13::distributions())
    EXPECT_NE(text.str().find("`" + std::string(d.name) + "`"), std::string::npos) << d.name << ": " << d.description;
  EXPECT_NE(text.str().find("<!-- 13_segmented:demo:begin -->"), std::string::npos);
  EXPECT_NE(text.str().find("<!-- 13_segmented:demo:end -->"), std::string::npos);
}

}  // namespace
