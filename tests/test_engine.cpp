// The engine that fills every record (common/harness.cuh), on the CPU: fill_common, check_runs and
// finish on made-up runs, rivals in the record, and run_bench's command line and exit codes with a
// measure() that opens no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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
  const Report chosen =
      reduce::fill_common(made_up_bench(reduce::BlockRule::inside("chosen")), opt, reduce::DeviceInfo{});
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

// A rival's made-up runs: run k's float sum is results[k], timed 2, 1 and 3 ms.
reduce::RivalRuns<float> rival_runs(const std::string& name, const std::vector<float>& results) {
  reduce::RivalRuns<float> c;
  c.name = name;
  c.results = results;
  c.count = 1;
  c.summary = reduce::summarize({2.0, 1.0, 3.0});
  c.identical = std::all_of(results.begin(), results.end(), [&](float x) { return x == results[0]; });
  return c;
}

std::vector<std::string> names(const Report& r) {
  std::vector<std::string> out;
  for (const reduce::Field& f : r.extra) out.push_back(f.name);
  return out;
}

const reduce::Field* field(const Report& r, const std::string& name) {
  for (const reduce::Field& f : r.extra)
    if (f.name == name) return &f;
  return nullptr;
}

TEST(Engine, ARivalIsRecordedUnderItsName) {
  Report r = checked({4, 4, 4, 4});
  r.ms.median = 1.0;
  reduce::derive_rates(r);
  const auto exact = [](const float* x) {
    reduce::Check c;
    c.exact = true;
    c.abs_error = *x > 4.0f ? *x - 4.0f : 4.0f - *x;
    c.passed = c.abs_error == 0;
    return Verdict(c, *x, 4.0, "the sum");
  };
  const auto bits = [](const float* x) {
    return std::vector<reduce::Field>{reduce::text_field("bits", std::to_string(*x))};
  };
  reduce::add_rival(r, rival_runs("cub", {4, 4, 4, 4}), exact, bits);
  EXPECT_EQ(names(r), (std::vector<std::string>{"cub_bits", "cub_median_ms", "cub_min_ms", "cub_max_ms", "cub_gbps",
                                                "vs_cub", "cub_passed", "cub_runs_identical"}));
  EXPECT_EQ(field(r, "cub_median_ms")->value, "2");
  EXPECT_EQ(field(r, "vs_cub")->value, "2");  // it takes twice our time
  EXPECT_EQ(field(r, "cub_passed")->value, "true");
  EXPECT_NE(reduce::format_json(r).find("\"cub_samples_ms\": [2, 1, 3]"), std::string::npos) << reduce::format_json(r);
  EXPECT_EQ(reduce::format_csv(r).find("samples"), std::string::npos);  // csv keeps no arrays
}

TEST(Engine, AWrongRivalIsANoteNotAFailure) {
  Report r = checked({4, 4, 4});
  testing::internal::CaptureStderr();
  reduce::add_rival(r, rival_runs("step10", {4, 6, 7}), [](const float* x) {
    reduce::Check c;
    c.exact = true;
    c.passed = *x == 4.0f;
    return Verdict(c, *x, 4.0);
  });
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(r.passed);  // the step is on trial, not its rival
  EXPECT_EQ(field(r, "step10_passed")->value, "false");
  EXPECT_EQ(field(r, "step10_runs_identical")->value, "false");
  EXPECT_NE(err.find("99_made_up: n = 4: note: step10's run 2 of 3: the result is 6, reference 4"), std::string::npos)
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST(Engine, AnAbsentRivalSaysWhyAndTimesNothing) {
  Report r = checked({4, 4});
  reduce::RivalRuns<float> absent;
  absent.name = "cub_g2g";
  absent.absent = "no CCCL 3.5 given";
  reduce::add_rival(r, absent, [](const float*) { return Verdict(); });
  EXPECT_EQ(names(r), std::vector<std::string>{"cub_g2g"});
  EXPECT_EQ(r.extra[0].value, "no CCCL 3.5 given");
  EXPECT_EQ(reduce::format_json(r).find("cub_g2g_samples_ms"), std::string::npos);
}

TEST(Engine, PrefixedNamesFieldsForOneReduction) {
  const auto f = reduce::prefixed("step", {reduce::number_field("abs_error", 0.5), reduce::text_field("bits", "0x0")});
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].name, "step_abs_error");
  EXPECT_EQ(f[1].name, "step_bits");
  EXPECT_EQ(f[1].value, "0x0");
}

TEST(Engine, SumVerdictMatchesANonFiniteReferenceAsItIs) {
  reduce::Reference finite, nan, inf;
  finite.sum = finite.abs_sum = 4.0;
  nan.sum = std::nan("");
  inf.sum = HUGE_VAL;
  const reduce::Pattern p = reduce::Pattern::uniform;
  EXPECT_TRUE(reduce::sum_verdict(4.0f, finite, 4, p).passed);
  EXPECT_FALSE(reduce::sum_verdict(std::nanf(""), finite, 4, p).passed);
  EXPECT_TRUE(reduce::sum_verdict(std::nanf(""), nan, 4, p).passed);
  EXPECT_FALSE(reduce::sum_verdict(4.0f, nan, 4, p).passed);
  EXPECT_TRUE(reduce::sum_verdict(INFINITY, inf, 4, p).passed);
  EXPECT_FALSE(reduce::sum_verdict(-INFINITY, inf, 4, p).passed);
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
