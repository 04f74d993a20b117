// Step 16 on 1, 2 and 4 GPUs: sizes that do not divide evenly (n < N, n = 0, shards of different
// lengths), exact checks for the int pattern, bitwise determinism across runs and across GPUs. A test
// that needs more GPUs than the machine shows is skipped with the reason; without a GPU, all are.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gpu_test_util.hpp"
#include "multi_gpu.hpp"
#include "team.cuh"

namespace {

using reduce::Pattern;

// Why a test that needs `gpus` GPUs cannot run here: the suite's words for no GPU at all
// (gpu_test_util.hpp), else "needs N GPUs, this machine shows M"; one wording per cause.
std::optional<std::string> why_not(int gpus) {
  if (const auto& none = reduce_test::no_gpu_reason()) return none;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  if (count < gpus) return "needs " + std::to_string(gpus) + " GPUs, this machine shows " + std::to_string(count);
  return std::nullopt;
}

#define SKIP_UNLESS_GPUS(n) \
  if (const auto why = why_not(n)) GTEST_SKIP() << *why

// One team per size of team for the whole program: making a communicator takes a while.
class Teams : public ::testing::Environment {
 public:
  static multigpu::Team& get(int gpus) {
    auto& slot = teams()[gpus];
    if (!slot) slot = std::make_unique<multigpu::Team>(multigpu::Team::all_local(gpus, 512));
    return *slot;
  }
  void TearDown() override { teams().clear(); }  // before the CUDA runtime shuts down

 private:
  static std::map<int, std::unique_ptr<multigpu::Team>>& teams() {
    static std::map<int, std::unique_ptr<multigpu::Team>> t;
    return t;
  }
};
const auto* const kTeams = ::testing::AddGlobalTestEnvironment(new Teams);

// Loads n elements, runs warm-up + timed runs, and checks every total against the reference.
std::vector<float> reduce_and_check(int gpus, std::int64_t n, Pattern p, std::uint64_t seed = 7) {
  multigpu::Team& team = Teams::get(gpus);
  reduce::Reference ref;
  for (const reduce::Reference& part : team.load(n, p, seed)) {
    ref.sum += part.sum;
    ref.abs_sum += part.abs_sum;
  }
  const multigpu::Timings t = team.run(/*warmup=*/1, /*iters=*/3);
  EXPECT_TRUE(t.gpus_agree) << "the GPUs hold different totals, n = " << n;
  EXPECT_EQ(t.results.size(), 4u);
  EXPECT_EQ(t.ms.size(), 3u);
  EXPECT_EQ(t.collective_ms.size(), 3u);
  for (std::size_t k = 0; k < t.results.size(); ++k) {
    const reduce::Check c = reduce::check_result(t.results[k], ref, n, p);
    EXPECT_TRUE(c.passed) << gpus << " GPUs, n = " << n << ", pattern " << reduce::to_string(p) << ", run " << k
                          << ": " << t.results[k] << " vs " << ref.sum << " (allowed " << c.tolerance << ")";
    if (p == Pattern::integers) EXPECT_TRUE(c.exact) << "the int pattern is checked exactly";
    EXPECT_EQ(std::memcmp(&t.results[k], &t.results[0], sizeof(float)), 0) << "run " << k << " differs from run 0";
  }
  EXPECT_TRUE(team.input_unchanged());
  return t.results;
}

class MultiGpuSizes : public ::testing::TestWithParam<std::tuple<int, std::int64_t, Pattern>> {};

TEST_P(MultiGpuSizes, SumMatchesTheReference) {
  const auto [gpus, n, p] = GetParam();
  SKIP_UNLESS_GPUS(gpus);
  reduce_and_check(gpus, n, p);
}

// 0 and sizes below N (empty shards); primes and odd sizes (shards one element apart, not
// multiples of 4, so step 10's head and tail paths run on every GPU); one size past L2.
INSTANTIATE_TEST_SUITE_P(
    Gpus, MultiGpuSizes,
    ::testing::Combine(::testing::Values(1, 2, 4),
                       ::testing::Values(std::int64_t{0}, std::int64_t{1}, std::int64_t{2}, std::int64_t{3},
                                         std::int64_t{5}, std::int64_t{31}, std::int64_t{1025}, std::int64_t{65537},
                                         std::int64_t{1000003}, (std::int64_t{1} << 22) + 3,
                                         (std::int64_t{1} << 25) + 1),
                       ::testing::Values(Pattern::integers, Pattern::mixed)),
    [](const auto& info) {
      return std::to_string(std::get<0>(info.param)) + "gpus_n" + std::to_string(std::get<1>(info.param)) + "_" +
             reduce::to_string(std::get<2>(info.param));
    });

class MultiGpuDeterminism : public ::testing::TestWithParam<int> {};

// The same n on the same N GPUs gives the same bits on every run, after a fresh load too.
TEST_P(MultiGpuDeterminism, RepeatedRunsGiveTheSameBits) {
  const int gpus = GetParam();
  SKIP_UNLESS_GPUS(gpus);
  const std::int64_t n = (std::int64_t{1} << 24) + 7;
  const std::vector<float> first = reduce_and_check(gpus, n, Pattern::uniform, 3);
  reduce_and_check(gpus, 1000, Pattern::uniform, 3);  // something else in between
  const std::vector<float> again = reduce_and_check(gpus, n, Pattern::uniform, 3);
  EXPECT_EQ(std::memcmp(&first[0], &again[0], sizeof(float)), 0) << first[0] << " then " << again[0];
}

INSTANTIATE_TEST_SUITE_P(Gpus, MultiGpuDeterminism, ::testing::Values(1, 2, 4),
                         [](const auto& info) { return std::to_string(info.param) + "gpus"; });

// On one GPU the team's total is step 10's own result: the add of one partial changes nothing.
TEST(MultiGpuSingle, OneGpuTeamEqualsStep10Alone) {
  SKIP_UNLESS_GPUS(1);
  const std::vector<float> team = reduce_and_check(1, 1000003, Pattern::uniform);
  const reduce::Runs<float> alone = Teams::get(1).single_gpu(1, 2);
  ASSERT_EQ(alone.results.size(), 3u);
  for (float v : alone.results) EXPECT_EQ(std::memcmp(&v, &team[0], sizeof(float)), 0) << v << " vs " << team[0];
}

// With several GPUs the baseline runs over the whole array on the first GPU and is correct too.
TEST(MultiGpuSingle, BaselineOverTheWholeArrayOnTheFirstGpu) {
  SKIP_UNLESS_GPUS(2);
  multigpu::Team& team = Teams::get(2);
  const std::int64_t n = 3000017;
  reduce::Reference ref;
  for (const reduce::Reference& part : team.load(n, Pattern::integers, 5, /*single_gpu=*/true)) {
    ref.sum += part.sum;
    ref.abs_sum += part.abs_sum;
  }
  const reduce::Runs<float> alone = team.single_gpu(1, 2);
  ASSERT_EQ(alone.results.size(), 3u);
  for (float v : alone.results) EXPECT_TRUE(reduce::check_result(v, ref, n, Pattern::integers).passed) << v;
}

}  // namespace
