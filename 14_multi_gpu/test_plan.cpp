// Step 14's CPU side: how the array is cut into shards, the command line, the JSON record.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "multi_gpu.hpp"

namespace {

using multigpu::shard_of;

// Every rank's shard, for every n up to 300 and every team size up to 9, then a few large n:
// contiguous, in rank order, covering [0, n) exactly once, lengths within one of each other.
void expect_partition(std::int64_t n, int ranks) {
  std::int64_t next = 0, shortest = n, longest = 0;
  for (int r = 0; r < ranks; ++r) {
    const multigpu::Shard s = shard_of(n, ranks, r);
    ASSERT_EQ(s.begin, next) << "n = " << n << ", rank " << r << " of " << ranks;
    ASSERT_GE(s.count, 0);
    next = s.begin + s.count;
    shortest = std::min(shortest, s.count);
    longest = std::max(longest, s.count);
  }
  EXPECT_EQ(next, n) << "n = " << n << ", " << ranks << " ranks";
  EXPECT_LE(longest - shortest, 1) << "n = " << n << ", " << ranks << " ranks";
}

TEST(MultiGpuShards, CoverEveryElementOnceForEveryNAndTeam) {
  for (int ranks = 1; ranks <= 9; ++ranks)
    for (std::int64_t n = 0; n <= 300; ++n) expect_partition(n, ranks);
}

TEST(MultiGpuShards, LargeCountsAndLargeTeams) {
  for (std::int64_t n : {std::int64_t{1} << 32, (std::int64_t{1} << 32) + 3, std::int64_t{1} << 36,
                         (std::int64_t{1} << 31) + 1025})
    for (int ranks : {1, 2, 3, 4, 7, 8, 1024}) expect_partition(n, ranks);
}

TEST(MultiGpuShards, FewerElementsThanRanksLeavesSomeShardsEmpty) {
  EXPECT_EQ(shard_of(0, 4, 3).count, 0);
  int empty = 0;
  for (int r = 0; r < 4; ++r) empty += shard_of(3, 4, r).count == 0;
  EXPECT_EQ(empty, 1);
  EXPECT_EQ(shard_of(5, 4, 3).count, 2);  // floor(r n / N): the last shard takes the extra element
}

multigpu::Options parse(std::vector<std::string> args) { return multigpu::parse_options(args); }

std::string usage_error(std::vector<std::string> args) {
  try {
    multigpu::parse_options(args);
  } catch (const reduce::UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(MultiGpuOptions, Defaults) {
  const multigpu::Options o = parse({});
  EXPECT_EQ(o.gpus, 0);
  EXPECT_EQ(o.common.n, std::int64_t{1} << 30);
  EXPECT_FALSE(o.per_gpu);
  EXPECT_FALSE(o.single_gpu);
  EXPECT_EQ(multigpu::sizes(o, 4), std::vector<std::int64_t>{std::int64_t{1} << 30});
}

TEST(MultiGpuOptions, OwnAndCommonOptionsTogether) {
  const multigpu::Options o =
      parse({"--gpus", "4", "--n=2^20", "--per-gpu", "--single-gpu", "--pattern", "int", "--format", "json", "--iters=7"});
  EXPECT_EQ(o.gpus, 4);
  EXPECT_TRUE(o.per_gpu);
  EXPECT_TRUE(o.single_gpu);
  EXPECT_EQ(o.common.iters, 7);
  EXPECT_EQ(o.common.pattern, reduce::Pattern::integers);
  EXPECT_EQ(multigpu::sizes(o, 4), std::vector<std::int64_t>{std::int64_t{4} << 20});
}

TEST(MultiGpuOptions, SweepGivesOneSizePerPower) {
  const multigpu::Options o = parse({"--sweep", "16:18"});
  EXPECT_EQ(multigpu::sizes(o, 2), (std::vector<std::int64_t>{1 << 16, 1 << 17, 1 << 18}));
  const multigpu::Options w = parse({"--sweep=3:3", "--per-gpu"});
  EXPECT_EQ(multigpu::sizes(w, 3), std::vector<std::int64_t>{24});
}

TEST(MultiGpuOptions, ErrorsNameTheOption) {
  EXPECT_NE(usage_error({"--gpus", "0"}).find("--gpus"), std::string::npos);
  EXPECT_NE(usage_error({"--gpus", "two"}).find("--gpus"), std::string::npos);
  EXPECT_NE(usage_error({"--gpus", "-1"}).find("--gpus"), std::string::npos);
  EXPECT_NE(usage_error({"--gpus", "1025"}).find("--gpus"), std::string::npos);
  EXPECT_NE(usage_error({"--gpus"}).find("--gpus"), std::string::npos);
  EXPECT_NE(usage_error({"--sweep", "20"}).find("--sweep"), std::string::npos);
  EXPECT_NE(usage_error({"--sweep", "20:10"}).find("--sweep"), std::string::npos);
  EXPECT_NE(usage_error({"--sweep", "10:40"}).find("--sweep"), std::string::npos);
  EXPECT_NE(usage_error({"--sweep", "10:12", "--n", "5"}).find("--sweep"), std::string::npos);
  EXPECT_NE(usage_error({"--per-gpu=1"}).find("--per-gpu"), std::string::npos);
  EXPECT_NE(usage_error({"--format", "csv"}).find("--format"), std::string::npos);
  EXPECT_NE(usage_error({"--device", "1"}).find("--device"), std::string::npos);
  EXPECT_NE(usage_error({"--cpu-runs", "1"}).find("--cpu-runs"), std::string::npos);
  EXPECT_NE(usage_error({"--frobnicate"}).find("--frobnicate"), std::string::npos);
  EXPECT_NE(usage_error({"--n", "abc"}).find("--n"), std::string::npos);
}

TEST(MultiGpuOptions, PerGpuCountOverTheLimitIsRefused) {
  const multigpu::Options o = parse({"--n", "2^36", "--per-gpu"});
  EXPECT_THROW(multigpu::sizes(o, 2), reduce::UsageError);
}

TEST(MultiGpuRecord, JsonHasTheFieldsTheScriptsRead) {
  multigpu::Record r;
  r.mode = "mpi";
  r.gpus = 2;
  r.n = 1000;
  r.ms = {2.0, 1.5, 3.0};
  r.collective_ms = {0.05, 0.04, 0.06};
  r.nccl_version = 22803;
  r.passed = true;
  const std::string j = multigpu::format_json(r);
  for (const char* field : {"\"step\": \"14_multi_gpu\"", "\"mode\": \"mpi\"", "\"gpus\": 2", "\"n\": 1000",
                            "\"median_ms\": 2", "\"min_ms\": 1.5", "\"max_ms\": 3", "\"gbps\": ", "\"collective_ms\": 0.05",
                            "\"collective_share\": 0.025", "\"single_gpu_ms\": null", "\"passed\": true", "\"device\": ",
                            "\"cuda_runtime\": ", "\"cuda_driver\": ", "\"nccl_version\": \"2.28.3\""})
    EXPECT_NE(j.find(field), std::string::npos) << field << " not in " << j;
  r.single_gpu_ms = 4.0;
  EXPECT_NE(multigpu::format_json(r).find("\"speedup_vs_single_gpu\": 2"), std::string::npos);
  EXPECT_DOUBLE_EQ(multigpu::gbps(r), 1000 * 4.0 / 2e-3 / 1e9);
  const std::string t = multigpu::format_text(r);
  EXPECT_NE(t.find("one process per GPU, MPI"), std::string::npos) << t;
  EXPECT_NE(t.find("speedup 2.00x"), std::string::npos) << t;
  EXPECT_EQ(t.substr(t.size() - 5), "PASS\n") << t;
}

}  // namespace
