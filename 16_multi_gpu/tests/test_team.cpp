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

#include "16_multi_gpu/multi_gpu.hpp"
#include "16_multi_gpu/rounds.cuh"
#include "16_multi_gpu/team.cuh"
#include "input.hpp"
#include "tests/gpu_test_util.hpp"

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
  static step16::Team& get(int gpus) {
    auto& slot = teams()[gpus];
    if (!slot) slot = std::make_unique<step16::Team>(step16::Team::all_local(gpus, 512));
    return *slot;
  }
  void TearDown() override { teams().clear(); }  // before the CUDA runtime shuts down

 private:
  static std::map<int, std::unique_ptr<step16::Team>>& teams() {
    static std::map<int, std::unique_ptr<step16::Team>> t;
    return t;
  }
};
const auto* const kTeams = ::testing::AddGlobalTestEnvironment(new Teams);

// Loads n elements, runs warm-up + timed runs, and checks every total against the reference.
std::vector<float> reduce_and_check(int gpus, std::int64_t n, Pattern p, std::uint64_t seed = 7) {
  step16::Team& team = Teams::get(gpus);
  reduce::Reference ref;
  for (const reduce::Reference& part : team.load(n, p, seed)) {
    ref.sum += part.sum;
    ref.abs_sum += part.abs_sum;
  }
  const step16::Timings t = team.run(/*warmup=*/1, /*iters=*/3);
  EXPECT_TRUE(t.gpus_agree) << "the GPUs hold different totals, n = " << n;
  EXPECT_EQ(t.results.size(), 4u);
  EXPECT_EQ(t.ms.size(), 3u);
  EXPECT_EQ(t.collective_ms.size(), 3u);
  for (std::size_t k = 0; k < t.results.size(); ++k) {
    const reduce::Check c = reduce::check_result(t.results[k], ref, n, p);
    EXPECT_TRUE(c.passed) << gpus << " GPUs, n = " << n << ", pattern " << reduce::to_string(p) << ", run " << k << ": "
                          << t.results[k] << " vs " << ref.sum << " (allowed " << c.tolerance << ")";
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
INSTANTIATE_TEST_SUITE_P(Gpus, MultiGpuSizes,
                         ::testing::Combine(::testing::Values(1, 2, 4),
                                            ::testing::Values(std::int64_t{0}, std::int64_t{1}, std::int64_t{2},
                                                              std::int64_t{3}, std::int64_t{5}, std::int64_t{31},
                                                              std::int64_t{1025}, std::int64_t{65537},
                                                              std::int64_t{1000003}, (std::int64_t{1} << 22) + 3,
                                                              (std::int64_t{1} << 25) + 1),
                                            ::testing::Values(Pattern::integers, Pattern::mixed)),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "gpus_n" +
                                  std::to_string(std::get<1>(info.param)) + "_" +
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

// Step 10 alone on the first GPU over the team's whole array, timed like every contender (rounds.cuh).
step16::Totals step10_alone(step16::Team& team, std::int64_t n) {
  step16::Solo alone(step16::shard_step(), team.first(), team.block());
  alone.load(team.whole(), n);
  alone.prepare(3);
  step16::Contender c;
  c.lanes = {&team.first()};
  c.enqueue = [&](int run) { alone.enqueue(run); };
  step16::run_rounds({&c}, 1, 2);
  EXPECT_EQ(c.ms.size(), 2u);
  return alone.totals();
}

// On one GPU the team's total is step 10's own result: the add of one partial changes nothing.
TEST(MultiGpuSingle, OneGpuTeamEqualsStep10Alone) {
  SKIP_UNLESS_GPUS(1);
  const std::vector<float> team = reduce_and_check(1, 1000003, Pattern::uniform);
  const step16::Totals alone = step10_alone(Teams::get(1), 1000003);
  ASSERT_EQ(alone.results.size(), 3u);
  for (float v : alone.results) EXPECT_EQ(std::memcmp(&v, &team[0], sizeof(float)), 0) << v << " vs " << team[0];
}

// With several GPUs the baseline runs over the whole array on the first GPU and is correct too.
TEST(MultiGpuSingle, BaselineOverTheWholeArrayOnTheFirstGpu) {
  SKIP_UNLESS_GPUS(2);
  step16::Team& team = Teams::get(2);
  const std::int64_t n = 3000017;
  reduce::Reference ref;
  for (const reduce::Reference& part : team.load(n, Pattern::integers, 5, /*whole_too=*/true)) {
    ref.sum += part.sum;
    ref.abs_sum += part.abs_sum;
  }
  const step16::Totals alone = step10_alone(team, n);
  ASSERT_EQ(alone.results.size(), 3u);
  for (float v : alone.results) EXPECT_TRUE(reduce::check_result(v, ref, n, Pattern::integers).passed) << v;
}

// One clock for everything compared (rounds.cuh): in the same interleaved rounds, a run that does all
// of another's work and more never reads faster than it beyond the noise. The ordinary team does step
// 10's work and the collective's; each mode does the ordinary mode's work and more, and (on one GPU)
// its step's alone. At n = 2^31 + 3 (where the old timing read the reproducible mode 7% faster than the
// ordinary one) on one GPU and on every GPU; "Huge", so it runs alone (about 35 GB on one GPU).
class OneClock : public ::testing::TestWithParam<std::tuple<bool, int>> {
};  // (every GPU, mode: -1 none, 0 order, 1 exact)

TEST_P(OneClock, HugeMoreWorkNeverReadsFaster) {
  const auto [every, which] = GetParam();
  SKIP_UNLESS_GPUS(every ? 2 : 1);
  int gpus = 1;
  if (every) CUDA_CHECK(cudaGetDeviceCount(&gpus));
  constexpr double kNoise = 0.10;
  const std::int64_t n = (std::int64_t{1} << 31) + 3;
  std::optional<step16::ReproducibleTeam> mode;
  if (which >= 0) {
    const step16::Sum sum = which ? step16::Sum::exact : step16::Sum::order;
    mode = step16::ReproducibleTeam::nccl_ranks(sum, gpus, step16::single_step(sum).block.size);
  }
  std::vector<float> host(static_cast<std::size_t>(which >= 0 ? n : 1));
  if (which >= 0) reduce::fill_input(host.data(), n, Pattern::uniform, 5);
  step16::Lineup line(step16::Team::all_local(gpus, 512), std::move(mode), /*single_gpu=*/true, /*root=*/true);
  line.load(n, Pattern::uniform, 5, host.data());
  line.time(/*warmup=*/2, /*iters=*/15);
  const std::string what = std::to_string(gpus) + " GPUs, " +
                           (which < 0 ? "ordinary"
                            : which   ? "exact"
                                      : "reproducible");
  for (const step16::Contender* c : line.contenders()) EXPECT_EQ(c->ms.size(), 15u) << what;
  auto expect_not_faster = [&](const step16::Contender& more, const step16::Contender& base, const char* pair) {
    EXPECT_TRUE(step16::not_faster_beyond_noise(more.ms, base.ms, kNoise))
        << what << ": " << pair << " = " << step16::paired_ratio(more.ms, base.ms) << " (more work read faster)";
  };
  expect_not_faster(line.timed(), line.collective(), "run / its collective alone");
  if (which >= 0) expect_not_faster(line.timed(), line.ordinary(), "mode / ordinary");
  if (gpus == 1) expect_not_faster(line.timed(), line.alone(), "run / its step alone on one GPU");
  const step16::Totals t = line.mode() ? line.mode()->totals() : line.team().totals();
  EXPECT_TRUE(t.agree && t.identical) << what;
}

INSTANTIATE_TEST_SUITE_P(Gpus, OneClock, ::testing::Combine(::testing::Bool(), ::testing::Values(-1, 0, 1)),
                         [](const auto& info) {
                           const int which = std::get<1>(info.param);
                           return std::string(std::get<0>(info.param) ? "every_gpu_" : "one_gpu_") +
                                  (which < 0 ? "ordinary"
                                   : which   ? "exact"
                                             : "reproducible");
                         });

}  // namespace
