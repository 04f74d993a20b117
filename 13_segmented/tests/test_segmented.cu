// 13_segmented on the GPU: every distribution at a small and a medium size, the edge cases (S = 0,
// empty, single-element and misaligned segments, n not a multiple of 4, segments at and around the
// tile length), determinism, and one segment of more than 2^31 floats. CUB's result on the same input
// must pass the same check. Skipped, with the reason, where no CUDA device is present.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "device.cuh"
#include "gpu_test_util.hpp"
#include "input.hpp"
#include "segmented.cuh"
#include "segments.hpp"

namespace {

using reduce::Pattern;
using seg::Offsets;

// The input on both sides and one launcher's outputs, run `runs` times; the outputs are poisoned with
// NaN before each run, and every run must give the bits of the first.
struct Case {
  std::vector<float> host;
  Offsets offsets;
  reduce::DeviceBuffer<float> in;
  reduce::DeviceBuffer<std::int64_t> d_offsets;

  Case(std::int64_t n, Offsets o, Pattern p, std::uint64_t seed = 1)
      : host(n), offsets(std::move(o)), in(n), d_offsets(offsets.size()) {
    seg::validate_offsets(offsets, n);
    reduce::fill_input(host.data(), n, p, seed);
    CUDA_CHECK(cudaMemcpy(in.get(), host.data(), in.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_offsets.get(), offsets.data(), d_offsets.bytes(), cudaMemcpyHostToDevice));
  }
  std::int64_t segments() const { return static_cast<std::int64_t>(offsets.size()) - 1; }

  // The outputs of `runs` runs of the suite's launcher (cub: CUB's), checking they are identical.
  std::vector<float> run(bool cub = false, int runs = 1) const {
    const std::int64_t n = static_cast<std::int64_t>(host.size()), s = segments();
    reduce::DeviceBuffer<unsigned char> scratch(cub ? seg::cub_scratch_bytes(s) : seg::scratch_bytes(n));
    reduce::DeviceBuffer<float> out(s);
    std::vector<float> first(s), again(s);
    for (int r = 0; r < runs; ++r) {
      if (s > 0) CUDA_CHECK(cudaMemset(out.get(), 0xFF, out.bytes()));
      const reduce::Scratch sc{scratch.get(), scratch.bytes()};
      CUDA_CHECK(cub ? seg::launch_cub(in.get(), d_offsets.get(), s, out.get(), sc, nullptr)
                     : seg::launch(in.get(), n, d_offsets.get(), s, out.get(), sc, nullptr));
      CUDA_CHECK(cudaDeviceSynchronize());
      if (s > 0)
        CUDA_CHECK(cudaMemcpy(r == 0 ? first.data() : again.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
      if (r > 0) EXPECT_EQ(std::memcmp(first.data(), again.data(), out.bytes()), 0) << "run " << r << " differs";
    }
    return first;
  }

  void expect_correct(Pattern p, bool cub = false, int runs = 1) const {
    const std::vector<float> out = run(cub, runs);
    const seg::SegmentsCheck c = seg::check_segments(host.data(), offsets, out.data(), p);
    EXPECT_EQ(c.wrong, 0) << (cub ? "CUB: " : "") << "first wrong segment " << c.first_wrong << " of " << segments()
                          << ": gave " << c.first_gpu << ", reference " << c.first_reference << " (allowed error "
                          << c.first_check.tolerance << ")";
  }
};

class EveryDistribution : public ::testing::TestWithParam<std::tuple<const char*, std::int64_t, Pattern>> {};

TEST_P(EveryDistribution, MatchesTheReferenceAndCub) {
  SKIP_WITHOUT_GPU();
  const auto [name, n, p] = GetParam();
  const Case c(n, seg::make_offsets(name, n, 5), p);
  c.expect_correct(p);
  c.expect_correct(p, /*cub=*/true);
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, EveryDistribution,
    ::testing::Combine(::testing::Values("uniform32", "fixed1000", "hundred", "whole", "powerlaw", "matrix-wide",
                                         "matrix-tall"),
                       ::testing::Values(std::int64_t{1}, std::int64_t{1001}, std::int64_t{100003},
                                         (std::int64_t{1} << 22) + 3, std::int64_t{1} << 25),
                       ::testing::Values(Pattern::integers, Pattern::mixed)),
    [](const auto& info) {
      std::string name = std::string(std::get<0>(info.param)) + "_n" + std::to_string(std::get<1>(info.param)) +
                         "_" + reduce::to_string(std::get<2>(info.param));
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
  const std::int64_t t = seg::kTile;
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
  const std::int64_t bounds[] = {1, 3, 31, 32, 33, 2047, 2048, 2049, 16383, 16384, 16385, 40001};
  for (std::int64_t start = 0; start < 4; ++start) {
    Offsets o{start};
    for (int rep = 0; rep < 3; ++rep)
      for (std::int64_t len : bounds) o.push_back(o.back() + len + rep);
    Case(o.back() + 3, o, Pattern::integers).expect_correct(Pattern::integers);
  }
}

TEST(Segmented, SegmentsAroundTileBoundaries) {
  SKIP_WITHOUT_GPU();
  // Long segments that begin and end exactly on, just before and just after tile boundaries, next
  // to each other and to short ones: each tile's two part slots in every combination.
  const std::int64_t t = seg::kTile;
  const Offsets cases[] = {
      {0, t, 2 * t, 3 * t},  {0, t + 1, 2 * t + 2, 5 * t},  {0, t - 1, 2 * t + 1, 2 * t + 2, 6 * t},
      {0, 1, t + 2, 3 * t - 1, 3 * t, 7 * t + 5}, {0, 2 * t - 1, 2 * t, 2 * t + 1, 4 * t + 1, 4 * t + 2}};
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
    Case(n, seg::make_offsets(name, n, 3), Pattern::uniform).expect_correct(Pattern::uniform, false, 20);
  }
}

TEST(SegmentedHuge, OneSegmentOver2To31) {
  SKIP_WITHOUT_GPU();
  const std::int64_t n = (std::int64_t{1} << 31) + 4099;
  std::size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  if (static_cast<double>(free_bytes) < n * 4.0 * 1.1)
    GTEST_SKIP() << "needs " << (n * 4 >> 30) + 1 << " GiB of free device memory, " << (free_bytes >> 30) << " free";
  // A short segment first, so the long one starts misaligned and past 2^31 floats' worth of bytes.
  const Case c(n, {0, 7, n - 2, n}, Pattern::integers);
  c.expect_correct(Pattern::integers);
}

}  // namespace
