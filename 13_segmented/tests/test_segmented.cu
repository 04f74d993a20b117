// 13_segmented on the GPU: every distribution at a small and a medium size, the edge cases (S = 0,
// empty, single-element and misaligned segments, n not a multiple of 4, segments at and around the
// tile length, runs of empty segments longer than a tile), the fixed-size mode, determinism, and
// offsets beyond 2^31. CUB's result on the same input must pass the same check, and so must the newest
// CUB's where it was built. Skipped, with the reason, where no CUDA device is present.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "13_segmented/cub35.hpp"
#include "13_segmented/segmented.cuh"
#include "13_segmented/segments.hpp"
#include "device.cuh"
#include "input.hpp"
#include "tests/gpu_test_util.hpp"

namespace {

using reduce::Pattern;
using step13::Offsets;

// The input on both sides and one launcher's outputs, run `runs` times; the outputs are poisoned with
// NaN before each run, and every run must give the bits of the first.
struct Case {
  std::vector<float> host;
  Offsets offsets;
  reduce::DeviceBuffer<float> in;
  reduce::DeviceBuffer<std::int64_t> d_offsets;

  Case(std::int64_t n, Offsets o, Pattern p, std::uint64_t seed = 1)
      : host(n), offsets(std::move(o)), in(n), d_offsets(offsets.size()) {
    step13::validate_offsets(offsets, n);
    reduce::fill_input(host.data(), n, p, seed);
    CUDA_CHECK(cudaMemcpy(in.get(), host.data(), in.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_offsets.get(), offsets.data(), d_offsets.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());  // a pageable copy may return before its data lands
  }
  std::int64_t segments() const { return static_cast<std::int64_t>(offsets.size()) - 1; }

  // The outputs of `runs` runs of one launcher, checking they are identical: the suite's with offsets,
  // or with `fixed` > 0 its fixed-size mode (offsets must then be fixed_offsets(n, fixed)); CUB's; the
  // newest CUB's offsets overload (cub35), or its fixed-size one when `fixed` > 0.
  enum class Who { suite, cub, cub35 };
  std::vector<float> run(Who who = Who::suite, int runs = 1, std::int64_t fixed = 0) const {
    const std::int64_t n = static_cast<std::int64_t>(host.size()), s = segments();
    reduce::DeviceBuffer<unsigned char> scratch(who == Who::cub     ? step13::cub_scratch_bytes(s)
                                                : who == Who::cub35 ? step13::cub35::scratch_bytes(s, fixed)
                                                                    : step13::scratch_bytes(n));
    if (scratch.bytes() > 0)
      CUDA_CHECK(cudaMemset(scratch.get(), 0, scratch.bytes()));  // the suite's launchers need it zeroed
    reduce::DeviceBuffer<float> out(s);
    std::vector<float> first(s), again(s);
    for (int r = 0; r < runs; ++r) {
      if (s > 0) CUDA_CHECK(cudaMemset(out.get(), 0xFF, out.bytes()));
      const reduce::Scratch sc{scratch.get(), scratch.bytes()};
      switch (who) {
        case Who::suite:
          CUDA_CHECK(fixed > 0 ? step13::launch_fixed(in.get(), n, fixed, s, out.get(), sc, nullptr)
                               : step13::launch(in.get(), n, d_offsets.get(), s, out.get(), sc, nullptr));
          break;
        case Who::cub:
          CUDA_CHECK(step13::launch_cub(in.get(), d_offsets.get(), s, out.get(), sc, nullptr));
          break;
        case Who::cub35:
          CUDA_CHECK(fixed > 0
                         ? step13::cub35::sum_fixed(in.get(), s, fixed, out.get(), sc.data, sc.bytes, nullptr)
                         : step13::cub35::sum(in.get(), d_offsets.get(), s, out.get(), sc.data, sc.bytes, nullptr));
          break;
      }
      CUDA_CHECK(cudaDeviceSynchronize());
      if (s > 0)
        CUDA_CHECK(cudaMemcpy(r == 0 ? first.data() : again.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
      if (r > 0) EXPECT_EQ(std::memcmp(first.data(), again.data(), out.bytes()), 0) << "run " << r << " differs";
    }
    return first;
  }

  void expect_correct(Pattern p, Who who = Who::suite, int runs = 1, std::int64_t fixed = 0) const {
    const std::vector<float> out = run(who, runs, fixed);
    const step13::SegmentsCheck c = step13::check_segments(host.data(), offsets, out.data(), p);
    EXPECT_EQ(c.wrong, 0) << (who == Who::cub     ? "CUB: "
                              : who == Who::cub35 ? "CUB 3.5: "
                                                  : "")
                          << (fixed > 0 ? "fixed size " + std::to_string(fixed) + ": " : std::string())
                          << "first wrong segment " << c.first_wrong << " of " << segments() << ": gave " << c.first_gpu
                          << ", reference " << c.first_reference << " (allowed error " << c.first_check.tolerance
                          << ")";
  }
};

class EveryDistribution : public ::testing::TestWithParam<std::tuple<const char*, std::int64_t, Pattern>> {};

TEST_P(EveryDistribution, MatchesTheReferenceAndCub) {
  SKIP_WITHOUT_GPU();
  const auto [name, n, p] = GetParam();
  const Case c(n, step13::make_offsets(name, n, 5), p);
  c.expect_correct(p);
  c.expect_correct(p, Case::Who::cub);
  if (step13::cub35::available()) c.expect_correct(p, Case::Who::cub35);
}

INSTANTIATE_TEST_SUITE_P(Sizes, EveryDistribution,
                         ::testing::Combine(::testing::Values("uniform32", "fixed1000", "hundred", "whole", "powerlaw",
                                                              "matrix-wide", "matrix-tall"),
                                            ::testing::Values(std::int64_t{1}, std::int64_t{1001}, std::int64_t{100003},
                                                              (std::int64_t{1} << 22) + 3, std::int64_t{1} << 25),
                                            ::testing::Values(Pattern::integers, Pattern::mixed)),
                         [](const auto& info) {
                           std::string name = std::string(std::get<0>(info.param)) + "_n" +
                                              std::to_string(std::get<1>(info.param)) + "_" +
                                              reduce::to_string(std::get<2>(info.param));
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

// Both places of the tiles' search (step13::Search) on every distribution, at a size where automatic picks
// the kernel for some distributions and the blocks for others: the same bits either way, since the search
// only finds where each tile's segments begin.
class BothSearches : public ::testing::TestWithParam<const char*> {};

// The tiles' search in its own kernel, then in the blocks: both outputs correct, and the same bits.
void expect_both_searches_agree(const Case& c, Pattern p) {
  const std::int64_t n = static_cast<std::int64_t>(c.host.size()), s = c.segments();
  std::vector<float> outs[2];
  const step13::Search searches[2] = {step13::Search::kernel, step13::Search::block};
  for (int k = 0; k < 2; ++k) {
    reduce::DeviceBuffer<unsigned char> scratch(step13::scratch_bytes(n));
    CUDA_CHECK(cudaMemset(scratch.get(), 0, scratch.bytes()));
    reduce::DeviceBuffer<float> out(s);
    CUDA_CHECK(cudaMemset(out.get(), 0xFF, out.bytes()));
    CUDA_CHECK(step13::launch(c.in.get(), n, c.d_offsets.get(), s, out.get(), {scratch.get(), scratch.bytes()}, nullptr,
                              searches[k]));
    outs[k].resize(s);
    CUDA_CHECK(cudaMemcpy(outs[k].data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
    const step13::SegmentsCheck check = step13::check_segments(c.host.data(), c.offsets, outs[k].data(), p);
    EXPECT_EQ(check.wrong, 0) << (k == 0 ? "kernel" : "block") << ": first wrong segment " << check.first_wrong
                              << " of " << s;
  }
  EXPECT_EQ(std::memcmp(outs[0].data(), outs[1].data(), s * sizeof(float)), 0) << s << " segments";
}

TEST_P(BothSearches, GiveTheSameBits) {
  SKIP_WITHOUT_GPU();
  const std::int64_t n = (std::int64_t{1} << 22) + 3;
  expect_both_searches_agree(Case(n, step13::make_offsets(GetParam(), n, 7), Pattern::mixed), Pattern::mixed);
}

// The blocks' two ways of searching meet at kBlockProbes offsets (all loaded at once up to it, round by
// round past it): segments one below, at and one above it, over 40 tiles, with what a count of
// offsets below a bound could get wrong: the first floats and the last in no segment (2 floats, or
// the last 3 tiles and more, whose first float is past offsets[S]), empty segments at a tile boundary
// and in the last tile, a segment ending on a tile boundary, one over several tiles.
TEST(BothSearches, AroundTheBlockProbesLimit) {
  SKIP_WITHOUT_GPU();
  const std::int64_t t = step13::kTile, n = 40 * t + 5;
  for (const std::int64_t s : {step13::kBlockProbes - 1, step13::kBlockProbes, step13::kBlockProbes + 1})
    for (const std::int64_t uncovered : {std::int64_t{2}, 3 * t + 2}) {
      Offsets o{3};
      for (std::int64_t k = 0; k < s; ++k) {
        const std::int64_t at = o.back();
        std::int64_t len = k % 7 == 0 ? 0 : (k * 2654435761) % 997 + 1;  // empty ones, and 1..997 floats
        if (k == 300) len = (at / t + 1) * t - at;                       // ends on a tile boundary...
        if (k == 301 || k == 302) len = 0;                               // ...where two empty ones begin
        if (k == 303) len = 3 * t + 1;                                   // over several tiles
        if (k == s - 2) len = n - uncovered - at;                        // up to the uncovered floats...
        if (k == s - 1) len = 0;                                         // ...where an empty one begins
        o.push_back(at + len);
      }
      ASSERT_EQ(o.back(), n - uncovered) << s << " segments";
      SCOPED_TRACE(std::to_string(s) + " segments, the last " + std::to_string(uncovered) + " floats in none");
      expect_both_searches_agree(Case(n, o, Pattern::integers), Pattern::integers);
    }
}

INSTANTIATE_TEST_SUITE_P(Distributions, BothSearches,
                         ::testing::Values("uniform32", "fixed1000", "hundred", "whole", "powerlaw", "matrix-wide",
                                           "matrix-tall"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

TEST(Segmented, NoSegments) {
  SKIP_WITHOUT_GPU();
  Case(100, {0}, Pattern::integers).expect_correct(Pattern::integers);
  Case(100, {100}, Pattern::integers).expect_correct(Pattern::integers);
  Case(0, {0}, Pattern::integers).expect_correct(Pattern::integers);
}

TEST(Segmented, EmptySegmentsGiveZero) {
  SKIP_WITHOUT_GPU();
  const std::int64_t t = step13::kTile;
  Case(0, {0, 0, 0}, Pattern::integers).expect_correct(Pattern::integers);
  for (const Offsets& o : {Offsets{0, 0, 0, 5, 5, 100, 100}, Offsets{0, 100, 100, 100}, Offsets{100, 100},
                           Offsets{0, 0, 3 * t + 7, 3 * t + 7, 3 * t + 7, 5 * t, 5 * t}}) {
    const Case c(5 * t, o, Pattern::integers);
    const std::vector<float> out = c.run();
    for (std::size_t s = 0; s + 1 < o.size(); ++s)
      if (o[s] == o[s + 1]) EXPECT_EQ(out[s], 0.0f) << "segment " << s;
    c.expect_correct(Pattern::integers);
  }
}

TEST(Segmented, SingleElementSegments) {
  SKIP_WITHOUT_GPU();
  for (std::int64_t n : {1, 2, 33, 1025, 70001}) {
    Offsets o(n + 1);
    for (std::int64_t i = 0; i <= n; ++i) o[i] = i;
    Case(n, o, Pattern::mixed).expect_correct(Pattern::mixed);
  }
}

TEST(Segmented, MisalignedStartsAndOddN) {
  SKIP_WITHOUT_GPU();
  // Every start modulo 4, lengths around each tier bound, n not a multiple of 4, floats before
  // offsets[0] and after offsets[S] in no segment.
  const std::int64_t t = step13::kTile;
  const std::int64_t bounds[] = {1, 3, 15, 16, 17, 31, 32, 33, 2047, 2048, 2049, t - 1, t, t + 1, 4 * t + 3, 40001};
  for (std::int64_t start = 0; start < 4; ++start) {
    Offsets o{start};
    for (int rep = 0; rep < 3; ++rep)
      for (std::int64_t len : bounds) o.push_back(o.back() + len + rep);
    Case(o.back() + 3, o, Pattern::integers).expect_correct(Pattern::integers);
  }
}

TEST(Segmented, SegmentsAroundTileBoundaries) {
  SKIP_WITHOUT_GPU();
  // Long segments that begin and end exactly on, just before and just after tile lengths, next to each
  // other and to short ones.
  const std::int64_t t = step13::kTile;
  const Offsets cases[] = {{0, t, 2 * t, 3 * t},
                           {0, t + 1, 2 * t + 2, 5 * t},
                           {0, t - 1, 2 * t + 1, 2 * t + 2, 6 * t},
                           {0, 1, t + 2, 3 * t - 1, 3 * t, 7 * t + 5},
                           {0, 2 * t - 1, 2 * t, 2 * t + 1, 4 * t + 1, 4 * t + 2}};
  for (const Offsets& o : cases) Case(o.back(), o, Pattern::integers).expect_correct(Pattern::integers);
}

TEST(Segmented, RandomLengthsAroundEveryBound) {
  SKIP_WITHOUT_GPU();
  std::uint64_t state = 12345;
  auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull, state >> 33; };
  for (std::int64_t scale : {std::int64_t{40}, std::int64_t{3000}, std::int64_t{20000}, std::int64_t{100000}}) {
    Offsets o{0};
    while (o.back() < (std::int64_t{1} << 22)) o.push_back(o.back() + static_cast<std::int64_t>(next() % scale));
    Case(o.back() + 1, o, Pattern::integers, 9).expect_correct(Pattern::integers);
  }
}

TEST(Segmented, DeterministicAcrossRuns) {
  SKIP_WITHOUT_GPU();
  for (const char* name : {"powerlaw", "uniform32", "whole"}) {
    const std::int64_t n = (std::int64_t{1} << 24) + 1;
    Case(n, step13::make_offsets(name, n, 3), Pattern::uniform).expect_correct(Pattern::uniform, Case::Who::suite, 20);
  }
  const std::int64_t n = (std::int64_t{1} << 24) + 3;
  Case(n, step13::fixed_offsets(n, 16), Pattern::uniform).expect_correct(Pattern::uniform, Case::Who::suite, 20, 16);
}

// The most batches a tile can list for its warps: every batch of 32 segments holds one segment of
// kThreadMax + 1 floats and 31 empty ones, so each tile lists about kTile / (kThreadMax + 1) batches;
// shifted by 0 to 40 floats so that the batches straddle the tile boundaries differently. Short ones of
// kThreadMax floats beside them keep the thread tier busy in the same tiles.
TEST(Segmented, EveryBatchWithOneSegmentPastTheThreadTier) {
  SKIP_WITHOUT_GPU();
  for (std::int64_t shift : {0, 1, 17, 40}) {
    Offsets o{shift};
    while (o.back() < 3 * step13::kTile) {
      o.push_back(o.back() + step13::kThreadMax + 1);
      for (int k = 0; k < 31; ++k) o.push_back(o.back());
    }
    for (int k = 0; k < 2000; ++k) o.push_back(o.back() + step13::kThreadMax);
    Case(o.back() + 5, o, Pattern::integers).expect_correct(Pattern::integers);
  }
}

// Runs of empty segments far more numerous than a tile's floats, at the start, between values and at
// the end (the last tile owns the empty segments that begin at n).
TEST(Segmented, LongRunsOfEmptySegments) {
  SKIP_WITHOUT_GPU();
  const std::int64_t n = 3 * step13::kTile + 5;
  Offsets o;
  for (std::int64_t k = 0; k < 300000; ++k) o.push_back(0);
  o.push_back(1000);
  for (std::int64_t k = 0; k < 200001; ++k) o.push_back(1003);
  o.push_back(n - 7);
  for (std::int64_t k = 0; k < 100000; ++k) o.push_back(n);
  const Case c(n, o, Pattern::integers);
  const std::vector<float> out = c.run();
  for (std::size_t s = 0; s + 1 < o.size(); ++s)
    if (o[s] == o[s + 1]) ASSERT_EQ(out[s], 0.0f) << "segment " << s;
  c.expect_correct(Pattern::integers);
}

// Values only, no offsets read: lengths around the vector width and the tile, n not a multiple of L (the
// floats after the last whole segment belong to none), against the reference, CUB (through the
// equivalent offsets) and the newest CUB's fixed-size overload.
class FixedSize : public ::testing::TestWithParam<std::tuple<std::int64_t, std::int64_t>> {};

TEST_P(FixedSize, MatchesTheReferenceAndCub) {
  SKIP_WITHOUT_GPU();
  const auto [n, len] = GetParam();
  const Case c(n, step13::fixed_offsets(n, len), Pattern::integers, 11);
  c.expect_correct(Pattern::integers, Case::Who::suite, 2, len);
  c.expect_correct(Pattern::integers, Case::Who::cub);
  if (step13::cub35::available()) c.expect_correct(Pattern::integers, Case::Who::cub35, 1, len);
}

// Every (n, L) pair with at least one whole segment: L > n has nothing to sum and is refused by the
// executable (runs.txt), so it is not a case here.
std::vector<std::tuple<std::int64_t, std::int64_t>> fixed_size_cases() {
  std::vector<std::tuple<std::int64_t, std::int64_t>> cases;
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{1001}, std::int64_t{100003}, (std::int64_t{1} << 22) + 3})
    for (const std::int64_t len :
         {std::int64_t{1}, std::int64_t{3}, std::int64_t{4}, std::int64_t{8}, std::int64_t{12}, std::int64_t{16},
          std::int64_t{17}, std::int64_t{24}, std::int64_t{32}, std::int64_t{1000}, std::int64_t{1024},
          std::int64_t{step13::kTile - 1}, std::int64_t{step13::kTile + 1}, std::int64_t{1} << 20})
      if (len <= n) cases.emplace_back(n, len);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Lengths, FixedSize, ::testing::ValuesIn(fixed_size_cases()), [](const auto& info) {
  return "n" + std::to_string(std::get<0>(info.param)) + "_L" + std::to_string(std::get<1>(info.param));
});

// The fixed-size mode on an input that starts one float after a 16-byte boundary: every tile's vectors
// are skewed.
TEST(Segmented, FixedSizeMisalignedInput) {
  SKIP_WITHOUT_GPU();
  const std::int64_t n = (std::int64_t{1} << 20) + 7;
  std::vector<float> host(n);
  reduce::fill_input(host.data(), n, Pattern::integers, 4);
  reduce::DeviceBuffer<float> in(n);
  CUDA_CHECK(cudaMemcpy(in.get(), host.data(), in.bytes(), cudaMemcpyHostToDevice));
  for (std::int64_t len : {1, 16, 1000}) {
    const std::int64_t m = n - 1, s = m / len;
    reduce::DeviceBuffer<unsigned char> scratch(step13::scratch_bytes(m));
    CUDA_CHECK(cudaMemset(scratch.get(), 0, scratch.bytes()));
    reduce::DeviceBuffer<float> out(s);
    CUDA_CHECK(step13::launch_fixed(in.get() + 1, m, len, s, out.get(), {scratch.get(), scratch.bytes()}, nullptr));
    std::vector<float> got(s);
    CUDA_CHECK(cudaMemcpy(got.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
    const step13::SegmentsCheck c =
        step13::check_segments(host.data() + 1, step13::fixed_offsets(m, len), got.data(), Pattern::integers);
    EXPECT_EQ(c.wrong, 0) << "L = " << len << ": first wrong segment " << c.first_wrong;
  }
}

TEST(Segmented, FixedSizeRefusesBadArguments) {
  SKIP_WITHOUT_GPU();
  reduce::DeviceBuffer<float> in(100), out(10);
  reduce::DeviceBuffer<unsigned char> scratch(step13::scratch_bytes(100));
  const reduce::Scratch sc{scratch.get(), scratch.bytes()};
  EXPECT_EQ(step13::launch_fixed(in.get(), 100, 11, 10, out.get(), sc, nullptr), cudaErrorInvalidValue);  // 110 > n
  EXPECT_EQ(step13::launch_fixed(in.get(), 100, 0, 10, out.get(), sc, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(step13::launch_fixed(in.get(), 100, 10, 10, out.get(), {scratch.get(), 1}, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(step13::launch_fixed(in.get(), 100, 10, 0, out.get(), sc, nullptr), cudaSuccess);  // nothing to do
}

TEST(SegmentedHuge, OneSegmentOver2To31) {
  SKIP_WITHOUT_GPU();
  const std::int64_t n = (std::int64_t{1} << 31) + 4099;
  SKIP_WITHOUT_DEVICE_MEMORY(n * 4.0 * 1.1);
  // A short segment first, so the long one starts misaligned and past 2^31 floats' worth of bytes.
  const Case c(n, {0, 7, n - 2, n}, Pattern::integers);
  c.expect_correct(Pattern::integers);
}

TEST(SegmentedHuge, ShortSegmentsBeyond2To31) {
  SKIP_WITHOUT_GPU();
  const std::int64_t n = (std::int64_t{1} << 31) + 4099;
  SKIP_WITHOUT_DEVICE_MEMORY(n * 4.0 * 1.5);
  // Segments of 1000 in the fixed-size mode (the last ones begin past 2^31 floats), then uniform32's
  // offsets, whose values pass 2^31.
  {
    const Case c(n, step13::fixed_offsets(n, 1000), Pattern::integers);
    c.expect_correct(Pattern::integers, Case::Who::suite, 1, 1000);
  }
  const Case c(n, step13::make_offsets("uniform32", n, 2), Pattern::integers);
  c.expect_correct(Pattern::integers);
}

}  // namespace
