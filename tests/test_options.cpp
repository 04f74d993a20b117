// Options: every accepted spelling, and every malformed input refused with a message naming it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "options.hpp"

using reduce::Options;
using reduce::parse_count;
using reduce::parse_options;
using reduce::UsageError;

namespace {

Options parse(std::vector<std::string> args) { return parse_options(args); }

// The error message for args, or "" when they parse.
std::string error_of(std::vector<std::string> args) {
  try {
    parse_options(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ParseCount, AcceptsPlainSuffixedAndPowerOfTwo) {
  EXPECT_EQ(parse_count("0"), 0);
  EXPECT_EQ(parse_count("1"), 1);
  EXPECT_EQ(parse_count("1000003"), 1000003);
  EXPECT_EQ(parse_count("4K"), 4096);
  EXPECT_EQ(parse_count("16M"), std::int64_t{1} << 24);
  EXPECT_EQ(parse_count("2G"), std::int64_t{1} << 31);
  EXPECT_EQ(parse_count("2^0"), 1);
  EXPECT_EQ(parse_count("2^26"), std::int64_t{1} << 26);
  EXPECT_EQ(parse_count("2^36"), reduce::max_n());
}

TEST(ParseCount, RefusesMalformedNegativeAndHuge) {
  for (const char* bad : {"", "abc", "-5", "+5", "1.5", "1.5x", "1e6", "2^", "2^-1", "2^x", "2^37", "K", "4k",
                          "4KB", "99999999999999999999", "68719476737", "65G", " 5", "5 "})
    EXPECT_FALSE(parse_count(bad).has_value()) << "'" << bad << "'";
}

TEST(ParseOptions, DefaultsAreTheStandardExperiment) {
  const Options o = parse({});
  EXPECT_EQ(o.n, std::int64_t{1} << 26);  // 256 MiB: several times a data-center L2
  EXPECT_EQ(o.block, 256);
  EXPECT_FALSE(o.block_given);  // so a step may apply its own default
  EXPECT_EQ(o.pattern, reduce::Pattern::uniform);
  EXPECT_EQ(o.format, reduce::Format::text);
  EXPECT_GE(o.iters, 20);
  EXPECT_FALSE(o.help);
}

TEST(ParseOptions, AcceptsEverySettingInBothSpellings) {
  const Options o = parse({"--n", "2^20", "--iters=7", "--warmup", "0", "--block", "1024", "--seed", "42",
                           "--pattern=mixed", "--format", "json", "--device", "0", "--cpu-runs", "0"});
  EXPECT_EQ(o.n, 1 << 20);
  EXPECT_EQ(o.iters, 7);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_EQ(o.block, 1024);
  EXPECT_TRUE(o.block_given);
  EXPECT_EQ(o.seed, 42u);
  EXPECT_EQ(o.pattern, reduce::Pattern::mixed);
  EXPECT_EQ(o.format, reduce::Format::json);
  EXPECT_EQ(o.cpu_runs, 0);
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_TRUE(parse({"-h"}).help);
  EXPECT_EQ(parse({"--pattern", "int"}).pattern, reduce::Pattern::integers);
  EXPECT_EQ(parse({"--format", "csv"}).format, reduce::Format::csv);
  for (int b : {32, 64, 128, 256, 512, 1024}) EXPECT_EQ(parse({"--block", std::to_string(b)}).block, b);
}

TEST(ParseOptions, ErrorsNameTheOptionAndTheValue) {
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> mentions;
  };
  const std::vector<Case> cases = {
      {{"--n", "abc"}, {"--n", "abc"}},
      {{"--n", "-5"}, {"--n", "-5"}},
      {{"--n", "1.5x"}, {"--n", "1.5x"}},
      {{"--block", "100"}, {"--block", "100", "power of two"}},
      {{"--block", "16"}, {"--block", "16"}},
      {{"--block", "2048"}, {"--block", "2048"}},
      {{"--iters", "0"}, {"--iters", "0"}},
      {{"--warmup", "-1"}, {"--warmup"}},
      {{"--seed", "x"}, {"--seed", "x"}},
      {{"--pattern", "zeros"}, {"--pattern", "zeros"}},
      {{"--format", "xml"}, {"--format", "xml"}},
      {{"--device", "-1"}, {"--device"}},
      {{"--frobnicate"}, {"--frobnicate", "unknown"}},
      {{"--frobnicate", "1"}, {"--frobnicate", "unknown"}},
      {{"--n"}, {"--n", "needs a value"}},
      {{"stray"}, {"stray"}},
  };
  for (const Case& c : cases) {
    const std::string msg = error_of(c.args);
    ASSERT_FALSE(msg.empty()) << c.args[0] << " was accepted";
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
    for (const std::string& m : c.mentions) EXPECT_NE(msg.find(m), std::string::npos) << msg << " lacks " << m;
  }
}

TEST(Usage, ListsEveryOption) {
  const std::string u = reduce::usage("01_interleaved");
  for (const char* opt : {"--n", "--iters", "--warmup", "--block", "--seed", "--pattern", "--format", "--device",
                          "--cpu-runs", "--help", "Exit codes"})
    EXPECT_NE(u.find(opt), std::string::npos) << opt;
}

TEST(Usage, ShowsTheStepsOwnDefaultBlock) {
  const std::string u = reduce::usage("07_cooperative_grid", 512);
  const auto line = u.substr(u.find("--block"), u.find('\n', u.find("--block")) - u.find("--block"));
  EXPECT_NE(line.find("[512]"), std::string::npos) << line;
}
