// The engine that fills every record (common/harness.cuh), on the CPU: fill_common, check_runs and
// finish on made-up runs, and run_bench's command line and exit codes with a measure() that opens no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness.cuh"

namespace {

using reduce::Bench;
using reduce::Report;
using reduce::Verdict;

Bench made_up_bench(reduce::BlockRule rule) {
  Bench b{"99_made_up", "a made-up step"};
  b.spec.block = rule;
  b.opens_own_devices = true;  // measure() below touches no GPU
  return b;
}

// Exact sums of 4.0 (pattern int): run k's result is results[k].
Report checked(const std::vector<double>& results, std::string* stderr_text = nullptr) {
  reduce::Options opt;
  opt.n = 4;
  opt.pattern = reduce::Pattern::integers;
  opt.warmup = 1;
  opt.iters = static_cast<int>(results.size()) - 1;
  Report r = reduce::fill_common(made_up_bench(reduce::BlockRule::any()), opt, reduce::DeviceInfo{});
  reduce::fill_timing(r, reduce::Summary{1.0, 1.0, 1.0}, true);
  testing::internal::CaptureStderr();
  reduce::check_runs(r, [&](int k) {
    reduce::Check c;
    c.exact = true;
    c.abs_error = results[k] > 4.0 ? results[k] - 4.0 : 4.0 - results[k];
    c.passed = c.abs_error == 0;
    return Verdict(c, results[k], 4.0, c.passed ? "" : "the sum");
  });
  reduce::finish(r, true);
  const std::string err = testing::internal::GetCapturedStderr();
  if (stderr_text) *stderr_text = err;
  return r;
}

TEST(Engine, FillCommonTakesTheOptionsAndTheBlockRule) {
  reduce::Options opt;
  opt.n = 1000;
  opt.seed = 7;
  opt.block = 128;
  opt.iters = 9;
  opt.warmup = 2;
  const Report free = reduce::fill_common(made_up_bench(reduce::BlockRule::any()), opt, reduce::DeviceInfo{});
  EXPECT_EQ(free.step, "99_made_up");
  EXPECT_EQ(free.n, 1000);
  EXPECT_EQ(free.seed, 7u);
  EXPECT_EQ(free.block, 128);
  EXPECT_EQ(free.block_rule, "free");
  EXPECT_NE(reduce::format_json(free).find("\"block_rule\": \"free\""), std::string::npos);
  EXPECT_EQ(free.runs_total, 11);
  EXPECT_TRUE(free.deterministic);
  opt.block = 0;  // what the parser leaves for a rule that chooses inside
  const Report chosen = reduce::fill_common(made_up_bench(reduce::BlockRule::inside("chosen")), opt, reduce::DeviceInfo{});
  EXPECT_EQ(chosen.block, 0);
  EXPECT_EQ(chosen.block_rule, "chosen");
  Report shaped = free;
  reduce::fill_timing(shaped, reduce::Summary{}, true, reduce::LaunchShape{64, 512, 2});
  EXPECT_EQ(shaped.block, 512);  // the launch the step reported wins
  EXPECT_EQ(shaped.grid, 64);
  EXPECT_EQ(shaped.launches, 2);
}

TEST(Engine, EveryRunCorrectPasses) {
  std::string err;
  const Report r = checked({4, 4, 4, 4}, &err);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.runs_correct, 4);
  EXPECT_EQ(r.result, 4.0);
  EXPECT_TRUE(err.empty()) << err;
}

TEST(Engine, TheFirstWrongRunIsShownAndToldInOneLine) {
  std::string err;
  const Report r = checked({4, 4, 5, 3}, &err);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.runs_correct, 2);
  EXPECT_EQ(r.result, 5.0);  // run 3 of 4, the first wrong one, not the last
  EXPECT_EQ(r.abs_error, 1.0);
  EXPECT_TRUE(r.exact_check);
  EXPECT_NE(err.find("99_made_up: n = 4: run 3 of 4: the sum is 5, reference 4"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST(Engine, FinishFailsOnAModifiedInputAndOnBrokenDeterminism) {
  Report r = checked({4, 4});
  testing::internal::CaptureStderr();
  reduce::finish(r, /*input_unchanged=*/false);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("modified its input"), std::string::npos);
  EXPECT_FALSE(r.passed);

  r = checked({4, 4});
  r.runs_identical = false;
  testing::internal::CaptureStderr();
  reduce::finish(r, true);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("different bits"), std::string::npos);
  EXPECT_FALSE(r.passed);
  r.deterministic = false;  // a step that does not claim the same bits (00_atomic)
  testing::internal::CaptureStderr();
  reduce::finish(r, true);
  EXPECT_TRUE(testing::internal::GetCapturedStderr().empty());
  EXPECT_TRUE(r.passed);
}

TEST(Engine, FitsInL2IsOfTheBytesRead) {
  Report r = checked({4, 4});
  r.device.l2_bytes = 16;
  reduce::finish(r, true);
  EXPECT_TRUE(r.fits_in_l2);  // 4 floats = 16 bytes
  r.bytes = 17;
  reduce::finish(r, true);
  EXPECT_FALSE(r.fits_in_l2);
}

// run_bench: the exit code is every record's verdict; the block rule's refusal is exit 2 before measure().
int run(const Bench& b, std::vector<std::string> args) {
  args.insert(args.begin(), b.name);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const int code = reduce::run_bench(b, static_cast<int>(argv.size()), argv.data());
  testing::internal::GetCapturedStdout();
  testing::internal::GetCapturedStderr();
  return code;
}

TEST(Engine, RunBenchExitCodes) {
  Bench b = made_up_bench(reduce::BlockRule::always(512, "a template parameter"));
  int measured = 0;
  bool pass = true;
  b.measure = [&](const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
    ++measured;
    Report r = reduce::fill_common(emit, opt, device);
    EXPECT_EQ(r.block, 512);
    r.passed = pass;
    emit(r);
  };
  EXPECT_EQ(run(b, {"--format", "json"}), 0);
  pass = false;
  EXPECT_EQ(run(b, {"--format", "json"}), 1);
  EXPECT_EQ(measured, 2);
  EXPECT_EQ(run(b, {"--block", "256"}), 2);
  EXPECT_EQ(run(b, {"--help"}), 0);
  EXPECT_EQ(measured, 2);
  b.measure = [](const reduce::Options&, const reduce::DeviceInfo&, reduce::Emitter&) {};
  EXPECT_EQ(run(b, {}), 1);  // no record is a failure, never a pass
}

}  // namespace
