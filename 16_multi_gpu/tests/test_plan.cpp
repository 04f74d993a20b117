// Step 16's CPU side: how the array is cut into shards, the command line, the record's fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "16_multi_gpu/multi_gpu.hpp"
#include "harness.cuh"

namespace {

using step16::shard_of;

// Each of `fields` ("\"name\": value" text) appears in the record's JSON.
void expect_fields(const std::string& json, std::initializer_list<const char*> fields) {
  for (const char* field : fields) EXPECT_NE(json.find(field), std::string::npos) << field << " not in " << json;
}

// Every rank's shard, for every n up to 300 and every team size up to 9, then a few large n:
// contiguous, in rank order, covering [0, n) exactly once, lengths within one of each other.
void expect_partition(std::int64_t n, int ranks) {
  std::int64_t next = 0, shortest = n, longest = 0;
  for (int r = 0; r < ranks; ++r) {
    const step16::Shard s = shard_of(n, ranks, r);
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
  for (std::int64_t n :
       {std::int64_t{1} << 32, (std::int64_t{1} << 32) + 3, std::int64_t{1} << 36, (std::int64_t{1} << 31) + 1025})
    for (int ranks : {1, 2, 3, 4, 7, 8, 1024}) expect_partition(n, ranks);
}

TEST(MultiGpuShards, FewerElementsThanRanksLeavesSomeShardsEmpty) {
  EXPECT_EQ(shard_of(0, 4, 3).count, 0);
  int empty = 0;
  for (int r = 0; r < 4; ++r) empty += shard_of(3, 4, r).count == 0;
  EXPECT_EQ(empty, 1);
  EXPECT_EQ(shard_of(5, 4, 3).count, 2);  // floor(r n / N): the last shard takes the extra element
}

// The command line as 16_multi_gpu reads it: the harness's parser with this step's spec, its options
// bound to a plan, then the step's own check (step 10's block, 512, as the default block).
struct Parsed {
  reduce::Options opt;
  step16::Plan plan;
};
Parsed parse(const std::vector<std::string>& args, bool mpi = false, int ranks = 1) {
  Parsed p;
  p.opt = reduce::parse_options(args, step16::option_spec(mpi, 512, p.plan));
  step16::check_options(p.opt, p.plan, mpi, ranks);
  return p;
}

std::string usage_error(const std::vector<std::string>& args, bool mpi = false, int ranks = 1) {
  try {
    parse(args, mpi, ranks);
  } catch (const reduce::UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(MultiGpuOptions, Defaults) {
  const auto [o, p] = parse({});
  EXPECT_EQ(p.gpus, 0);
  EXPECT_EQ(o.n, std::int64_t{1} << 30);
  EXPECT_EQ(o.block, 512);
  EXPECT_FALSE(p.per_gpu);
  EXPECT_FALSE(p.single_gpu);
  EXPECT_EQ(step16::sizes(p, o.n, 4), std::vector<std::int64_t>{std::int64_t{1} << 30});
}

TEST(MultiGpuOptions, OwnAndCommonOptionsTogether) {
  const auto [o, p] = parse({"--gpus", "4", "--n=2^20", "--per-gpu", "--single-gpu", "--pattern", "int", "--format",
                             "json", "--iters=7", "--block", "256"});
  EXPECT_EQ(p.gpus, 4);
  EXPECT_TRUE(p.per_gpu);
  EXPECT_TRUE(p.single_gpu);
  EXPECT_EQ(o.iters, 7);
  EXPECT_EQ(o.block, 256);
  EXPECT_EQ(o.pattern, reduce::Pattern::integers);
  EXPECT_EQ(step16::sizes(p, o.n, 4), std::vector<std::int64_t>{std::int64_t{4} << 20});
}

// The progression's options keep their meaning here: csv records, the CPU yardsticks' runs.
TEST(MultiGpuOptions, CsvAndCpuRunsAreAccepted) {
  EXPECT_EQ(parse({"--format", "csv"}).opt.format, reduce::Format::csv);
  EXPECT_EQ(parse({"--cpu-runs", "0"}).opt.cpu_runs, 0);
  EXPECT_EQ(parse({"--cpu-runs=2"}).opt.cpu_runs, 2);
}

TEST(MultiGpuOptions, SweepGivesOneSizePerPower) {
  const Parsed o = parse({"--sweep", "16:18"});
  EXPECT_EQ(step16::sizes(o.plan, o.opt.n, 2), (std::vector<std::int64_t>{1 << 16, 1 << 17, 1 << 18}));
  const Parsed w = parse({"--sweep=3:3", "--per-gpu"});
  EXPECT_EQ(step16::sizes(w.plan, w.opt.n, 3), std::vector<std::int64_t>{24});
}

TEST(MultiGpuOptions, ErrorsNameTheOption) {
  EXPECT_NE(usage_error({"--gpus", "0"}).find("--gpus"), std::string::npos);
  EXPECT_NE(usage_error({"--gpus", "two"}).find("--gpus"), std::string::npos);
  EXPECT_NE(usage_error({"--gpus", "-1"}).find("--gpus"), std::string::npos);
  EXPECT_NE(usage_error({"--gpus", "1025"}).find("--gpus"), std::string::npos);
  EXPECT_NE(usage_error({"--gpus"}).find("--gpus"), std::string::npos);
  EXPECT_NE(usage_error({"--gpus", "1", "--gpus", "2"}).find("given twice"), std::string::npos);
  EXPECT_NE(usage_error({"--sweep", "20"}).find("--sweep"), std::string::npos);
  EXPECT_NE(usage_error({"--sweep", "20:10"}).find("--sweep"), std::string::npos);
  EXPECT_NE(usage_error({"--sweep", "10:40"}).find("--sweep"), std::string::npos);
  EXPECT_NE(usage_error({"--sweep", ":12"}).find("--sweep"), std::string::npos);
  EXPECT_NE(usage_error({"--sweep", "10:12", "--n", "5"}).find("--sweep"), std::string::npos);
  EXPECT_NE(usage_error({"--per-gpu=1"}).find("--per-gpu"), std::string::npos);
  EXPECT_NE(usage_error({"--single-gpu=yes"}).find("--single-gpu"), std::string::npos);
  EXPECT_NE(usage_error({"--format", "xml"}).find("--format"), std::string::npos);
  EXPECT_NE(usage_error({"--cpu-runs", "-1"}).find("--cpu-runs"), std::string::npos);
  EXPECT_NE(usage_error({"--frobnicate"}).find("--frobnicate"), std::string::npos);
  EXPECT_NE(usage_error({"--n", "abc"}).find("--n"), std::string::npos);
}

// --device is refused with the reason, whatever its value: the step chooses its GPUs itself.
TEST(MultiGpuOptions, DeviceIsRefusedWithTheReason) {
  for (const char* v : {"0", "1"}) {
    const std::string e = usage_error({"--device", v});
    EXPECT_NE(e.find("--device"), std::string::npos) << e;
    EXPECT_NE(e.find("GPUs 0 .. N-1"), std::string::npos) << e;
  }
  EXPECT_NE(usage_error({"--device", "0"}, /*mpi=*/true, 2).find("rank r uses the r-th GPU"), std::string::npos);
}

TEST(MultiGpuOptions, UnderMpiGpusMustEqualTheRanks) {
  EXPECT_EQ(usage_error({"--gpus", "2"}, true, 2), "(accepted)");
  EXPECT_NE(usage_error({"--gpus", "3"}, true, 2).find("MPI ranks"), std::string::npos);
}

TEST(MultiGpuOptions, PerGpuCountOverTheLimitIsRefused) {
  const Parsed o = parse({"--n", "2^36", "--per-gpu"});
  EXPECT_THROW(step16::sizes(o.plan, o.opt.n, 2), reduce::UsageError);
  // Where --gpus says how many, before any GPU is touched.
  EXPECT_NE(usage_error({"--gpus", "2", "--n", "2^36", "--per-gpu"}).find("2^36"), std::string::npos);
}

// --help: the harness's sections, this step's title, defaults and options; never a path from argv.
TEST(MultiGpuOptions, HelpHasTheSectionsAndTheDefaults) {
  step16::Plan plan;
  const std::string h =
      reduce::usage("16_multi_gpu", "one array over several GPUs", step16::option_spec(false, 512, plan));
  for (const char* part : {"16_multi_gpu: one array over several GPUs\n", "usage: 16_multi_gpu [options]", "[2^30]",
                           "--gpus N", "--per-gpu", "--sweep A:B", "--single-gpu", "[512]", "--cpu-runs", "--exact",
                           "refused here: the step uses GPUs 0 .. N-1", "Exit codes"})
    EXPECT_NE(h.find(part), std::string::npos) << part << " not in\n" << h;
}

reduce::Report made_up_record() {
  reduce::Report r;
  r.step = "16_multi_gpu";
  r.device.name = "GPU";
  r.device.peak_gbps = 1000.0;
  r.device.runtime_version = 13000;
  r.device.driver_version = 13000;
  r.n = 1000;
  r.ms = {2.0, 1.5, 3.0};
  r.passed = true;
  reduce::derive_rates(r);
  return r;
}

step16::TeamFields made_up_fields() {
  step16::TeamFields t;
  t.mode = "mpi";
  t.gpus = 2;
  t.timing.collective = reduce::summarize({0.04, 0.05, 0.06});
  t.nccl_version = 22803;
  t.gpus_agree = true;
  return t;
}

// The fields the scripts read, with the types of every step's record (cuda_runtime a string).
// --reproducible and --virtual-ranks: read into the plan, the combinations that mean nothing refused.
TEST(MultiGpuOptions, ReproducibleModeAndVirtualRanks) {
  const step16::Plan plain = parse({}).plan;
  EXPECT_FALSE(plain.reproducible);
  EXPECT_EQ(plain.virtual_ranks, 0);
  const step16::Plan p = parse({"--reproducible", "--virtual-ranks", "3"}).plan;
  EXPECT_TRUE(p.reproducible);
  EXPECT_EQ(p.virtual_ranks, 3);
  EXPECT_TRUE(parse({"--reproducible", "--gpus", "2"}).plan.reproducible);
  const Parsed w = parse({"--reproducible", "--virtual-ranks", "3", "--n", "10", "--per-gpu"});
  EXPECT_EQ(step16::sizes(w.plan, w.opt.n, 3), std::vector<std::int64_t>{30});

  EXPECT_NE(usage_error({"--virtual-ranks", "2"}).find("needs --reproducible or --exact"), std::string::npos);
  EXPECT_NE(usage_error({"--reproducible", "--virtual-ranks", "2", "--gpus", "2"}).find("exclude"), std::string::npos);
  EXPECT_NE(usage_error({"--reproducible", "--single-gpu"}).find("--single-gpu"), std::string::npos);
  EXPECT_NE(usage_error({"--reproducible", "--virtual-ranks", "0"}).find("--virtual-ranks"), std::string::npos);
  EXPECT_NE(usage_error({"--reproducible", "--virtual-ranks", "1025"}).find("--virtual-ranks"), std::string::npos);
  EXPECT_NE(usage_error({"--reproducible=1"}).find("--reproducible"), std::string::npos);
  EXPECT_NE(usage_error({"--reproducible"}, /*mpi=*/true, 2).find("run 16_multi_gpu"), std::string::npos);
  EXPECT_NE(usage_error({"--reproducible", "--virtual-ranks", "2", "--n", "2^36", "--per-gpu"}).find("2^36"),
            std::string::npos);
}

// --exact: its own flag, with --virtual-ranks or --gpus, and refused beside --reproducible, --single-gpu
// and under MPI.
TEST(MultiGpuOptions, ExactMode) {
  EXPECT_FALSE(parse({}).plan.exact);
  const step16::Plan p = parse({"--exact", "--virtual-ranks", "5"}).plan;
  EXPECT_TRUE(p.exact);
  EXPECT_FALSE(p.reproducible);
  EXPECT_EQ(p.virtual_ranks, 5);
  EXPECT_TRUE(parse({"--exact", "--gpus", "2"}).plan.exact);
  EXPECT_NE(usage_error({"--exact", "--reproducible"}).find("exclude each other"), std::string::npos);
  EXPECT_NE(usage_error({"--exact", "--single-gpu"}).find("--single-gpu: --exact"), std::string::npos);
  EXPECT_NE(usage_error({"--exact", "--virtual-ranks", "2", "--gpus", "2"}).find("exclude"), std::string::npos);
  EXPECT_NE(usage_error({"--exact=1"}).find("--exact"), std::string::npos);
  EXPECT_NE(usage_error({"--exact"}, /*mpi=*/true, 2).find("--exact: one process"), std::string::npos);
}

step16::ReproducibleFields made_up_reproducible(const std::string& bits) {
  step16::ReproducibleFields f;
  f.gpus = 1;
  f.ranks = 3;
  f.virtual_ranks = true;
  f.tiles = 17;
  f.tiles_per_rank = 6;
  f.result_bits = bits;
  f.single_bits = "0x3f800000";
  f.ranks_agree = true;
  f.nccl_version = 22803;
  return f;
}

// The reproducible mode's record: its fields, and a fail where the bits are not 14_reproducible's.
TEST(MultiGpuRecord, ReproducibleFieldsAndTheirVerdict) {
  reduce::Report r = made_up_record();
  step16::ReproducibleFields mine = made_up_reproducible("0x3f800000");
  mine.ordinary = reduce::summarize({0.9, 1.0, 1.1});
  step16::add_reproducible_fields(r, mine);
  const std::string j = reduce::format_json(r);
  expect_fields(j, {"\"mode\": \"reproducible_virtual\"", "\"gpus\": 1", "\"ranks\": 3", "\"tiles\": 17",
                    "\"tiles_per_rank\": 6", "\"result_bits\": \"0x3f800000\"", "\"step14_bits\": \"0x3f800000\"",
                    "\"same_as_step14\": true", "\"ranks_agree\": true", "\"vs_ordinary\": 0.5", "\"passed\": true"});
  EXPECT_DOUBLE_EQ(r.pct_peak, 100.0 * r.gbps / 1000.0);  // one GPU's peak

  reduce::Report other = made_up_record();
  step16::add_reproducible_fields(other, made_up_reproducible("0x3f800001"));
  EXPECT_FALSE(other.passed);
  EXPECT_NE(reduce::format_json(other).find("\"same_as_step14\": false"), std::string::npos);
  reduce::Report split = made_up_record();
  step16::ReproducibleFields f = made_up_reproducible("0x3f800000");
  f.ranks_agree = false;
  step16::add_reproducible_fields(split, f);
  EXPECT_FALSE(split.passed);
}

// The exact mode's record: its own fields (the shards from n and the ranks), none of the order's.
TEST(MultiGpuRecord, ExactFieldsAndTheirVerdict) {
  step16::ReproducibleFields f = made_up_reproducible("0x3f800000");
  f.exact = true;
  f.virtual_ranks = false;
  f.gpus = 3;
  f.tiles = f.tiles_per_rank = 0;
  f.limbs = 12;
  reduce::Report r = made_up_record();  // n = 1000 over 3 ranks: shards of 333 and 334
  step16::add_reproducible_fields(r, f);
  const std::string j = reduce::format_json(r);
  expect_fields(j, {"\"mode\": \"exact\"", "\"gpus\": 3", "\"ranks\": 3", "\"shard_min\": 333", "\"shard_max\": 334",
                    "\"limbs\": 12", "\"result_bits\": \"0x3f800000\"", "\"single_bits\": \"0x3f800000\"",
                    "\"same_as_single\": true", "\"ranks_agree\": true", "\"passed\": true"});
  for (const char* field : {"tiles", "step14_bits"})
    EXPECT_EQ(j.find(field), std::string::npos) << field << " in " << j;
  EXPECT_DOUBLE_EQ(r.pct_peak, 100.0 * r.gbps / 3000.0);  // three GPUs' peak

  f.virtual_ranks = true;
  f.result_bits = "0x3f800001";
  reduce::Report other = made_up_record();
  step16::add_reproducible_fields(other, f);
  EXPECT_FALSE(other.passed);
  const std::string k = reduce::format_json(other);
  EXPECT_NE(k.find("\"mode\": \"exact_virtual\""), std::string::npos) << k;
  EXPECT_NE(k.find("\"same_as_single\": false"), std::string::npos) << k;
}

TEST(MultiGpuRecord, JsonHasTheFieldsTheScriptsRead) {
  reduce::Report r = made_up_record();
  step16::add_team_fields(r, made_up_fields());
  const std::string j = reduce::format_json(r);
  expect_fields(j, {"\"step\": \"16_multi_gpu\"", "\"mode\": \"mpi\"", "\"gpus\": 2", "\"n\": 1000", "\"median_ms\": 2",
                    "\"min_ms\": 1.5", "\"max_ms\": 3", "\"gbps\": ", "\"shard_min\": 500", "\"shard_max\": 500",
                    "\"collective_ms\": 0.05", "\"collective_min_ms\": 0.04", "\"collective_share\": 0.025",
                    "\"gpus_agree\": true", "\"passed\": true", "\"device\": \"GPU\"", "\"cuda_runtime\": \"13.0\"",
                    "\"cuda_driver\": \"13.0\"", "\"nccl_version\": \"2.28.3\""});
  EXPECT_DOUBLE_EQ(r.gbps, 1000 * 4.0 / 2e-3 / 1e9);
  EXPECT_DOUBLE_EQ(r.pct_peak, 100.0 * r.gbps / 2000.0);  // of both GPUs' peak

  reduce::Report with_baseline = made_up_record();
  step16::TeamFields t = made_up_fields();
  t.timing.single = reduce::summarize({3.5, 4.0, 4.5});
  t.timing.single_step = "10_loads_in_flight";
  step16::add_team_fields(with_baseline, t);
  const std::string json = reduce::format_json(with_baseline);
  expect_fields(json, {"\"vs_single_gpu\": 2", "\"single_gpu_median_ms\": 4", "\"single_gpu_gbps\": ",
                       "\"single_gpu_step\": \"10_loads_in_flight\"", "\"time_over_floor\": 0.49"});
  EXPECT_EQ(j.find("single_gpu_step"), std::string::npos) << "no step alone, no comparison with it";
  EXPECT_EQ(json.find("speedup_vs_single_gpu"), std::string::npos) << "one name for the speedup: vs_single_gpu";
  const std::string text = reduce::format_text(with_baseline);
  EXPECT_NE(text.find("vs_single_gpu 2"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 5), "PASS\n") << text;
}

// csv: the header names 16's fields after the common ones, and a record has as many columns.
TEST(MultiGpuRecord, CsvHeaderAndLineAgree) {
  reduce::Report r = made_up_record();
  step16::add_team_fields(r, made_up_fields());
  const std::string header = reduce::csv_header(r), line = reduce::format_csv(r);
  EXPECT_EQ(header.rfind(reduce::csv_header(), 0), 0u) << "the common columns first";
  for (const char* column : {",mode,gpus,n_per_gpu,shard_min,shard_max,", ",nccl_version,collective_ms,",
                             ",collective_share,head_start_ms,enqueue_ms,late_runs"})
    EXPECT_NE(header.find(column), std::string::npos) << column << " not in " << header;
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), std::count(line.begin(), line.end(), ','));
}

// The rounds' order: every contender at every position once in `count` rounds, none always first.
TEST(MultiGpuTiming, RoundOrderRotates) {
  EXPECT_EQ(step16::round_order(3, 0), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(step16::round_order(3, 1), (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(step16::round_order(3, 5), (std::vector<int>{2, 0, 1}));
  EXPECT_TRUE(step16::round_order(0, 4).empty());
  for (int count = 1; count <= 5; ++count)
    for (int position = 0; position < count; ++position) {
      std::vector<int> seen;
      for (int r = 0; r < count; ++r) seen.push_back(step16::round_order(count, r)[position]);
      std::sort(seen.begin(), seen.end());
      for (int k = 0; k < count; ++k) EXPECT_EQ(seen[k], k) << count << " contenders, position " << position;
    }
}

// Ratios paired by round: a round slow for both does not move the ratio; more work that reads faster
// than its base beyond the noise is caught; a base that took no time (one rank's in-place all-gather)
// is never beaten.
TEST(MultiGpuTiming, PairedRatioAndTheNoise) {
  const std::vector<double> base = {1.0, 2.0, 1.0, 1.0, 10.0};
  const std::vector<double> same_rounds = {1.1, 2.2, 1.1, 1.1, 11.0};
  EXPECT_DOUBLE_EQ(step16::paired_ratio(same_rounds, base), 1.1);
  EXPECT_TRUE(step16::not_faster_beyond_noise(same_rounds, base, 0.05));
  const std::vector<double> faster = {0.9, 1.8, 0.9, 0.9, 9.0};
  EXPECT_DOUBLE_EQ(step16::paired_ratio(faster, base), 0.9);
  EXPECT_FALSE(step16::not_faster_beyond_noise(faster, base, 0.05));
  EXPECT_TRUE(step16::not_faster_beyond_noise(faster, base, 0.15));
  EXPECT_TRUE(step16::not_faster_beyond_noise(faster, {0.0, 0.0, 0.0, 0.0, 0.0}, 0.05));
  EXPECT_DOUBLE_EQ(step16::paired_ratio({}, base), 0.0);
  EXPECT_DOUBLE_EQ(step16::paired_ratio({2.0, 3.0}, {0.0, 1.0}), 3.0) << "a base of 0 ms pairs with nothing";
}

TEST(MultiGpuRecord, NcclVersionString) {
  EXPECT_EQ(step16::nccl_version_string(22803), "2.28.3");
  EXPECT_EQ(step16::nccl_version_string(21903), "2.19.3");
}

}  // namespace
