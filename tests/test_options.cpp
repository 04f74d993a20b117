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
  for (const char* bad : {"", "abc", "-5", "+5", "1.5", "1.5x", "1e6", "2^", "2^-1", "2^x", "2^37", "K", "4k", "4KB",
                          "99999999999999999999", "68719476737", "65G", " 5", "5 "})
    EXPECT_FALSE(parse_count(bad).has_value()) << "'" << bad << "'";
}

TEST(ParseOptions, DefaultsAreTheStandardExperiment) {
  const Options o = parse({});
  EXPECT_EQ(o.n, std::int64_t{1} << 26);  // 256 MiB: several times a data-center L2
  EXPECT_EQ(o.block, 256);
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
  const std::string u = reduce::usage("07_cooperative_grid", reduce::BlockRule::any(512));
  const auto line = u.substr(u.find("--block"), u.find('\n', u.find("--block")) - u.find("--block"));
  EXPECT_NE(line.find("[512]"), std::string::npos) << line;
}

// One block rule for every executable: free takes --block (its size when absent); fixed and chosen
// refuse it with their reason, in one line, and --help shows the reason instead of a default.
TEST(BlockRule, FreeFixedAndChosen) {
  reduce::OptionSpec spec;
  spec.block = reduce::BlockRule::any(512);
  EXPECT_EQ(reduce::parse_options(std::vector<std::string>{}, spec).block, 512);
  EXPECT_EQ(reduce::parse_options(std::vector<std::string>{"--block", "128"}, spec).block, 128);
  for (const reduce::BlockRule rule : {reduce::BlockRule::always(512, "a template parameter of every kernel"),
                                       reduce::BlockRule::inside("the library chooses its launch shape")}) {
    spec.block = rule;
    EXPECT_EQ(reduce::parse_options(std::vector<std::string>{}, spec).block, rule.size);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--block", "128"}, std::vector<std::string>{"--block=1024"},
          std::vector<std::string>{"--block"}}) {
      try {
        reduce::parse_options(args, spec);
        ADD_FAILURE() << rule.kind_name() << ": " << args[0] << " accepted";
      } catch (const reduce::UsageError& e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.rfind("--block: ", 0), 0u) << msg;
        EXPECT_NE(msg.find(rule.reason), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      }
    }
    const std::string u = reduce::usage("x", "y", spec);
    EXPECT_NE(u.find(std::string("refused here: ") + rule.reason), std::string::npos) << u;
  }
}

// A common option a program ignores is refused with the program's reason, and --help says so.
TEST(RefusedOptions, NamedWithTheReason) {
  reduce::OptionSpec spec;
  spec.refused = {{"--pattern", "the kernel reads zeros; nothing is summed"}, {"--device", "GPUs 0 .. N-1"}};
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--pattern", "int"}, std::vector<std::string>{"--pattern=uniform"},
        std::vector<std::string>{"--device", "0"}}) {
    try {
      reduce::parse_options(args, spec);
      ADD_FAILURE() << args[0] << " accepted";
    } catch (const reduce::UsageError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(args[0].substr(0, args[0].find('=')) + ": ", 0), 0u) << msg;
      EXPECT_TRUE(msg.find("nothing is summed") != std::string::npos || msg.find("GPUs 0 .. N-1") != std::string::npos)
          << msg;
    }
  }
  EXPECT_NO_THROW(reduce::parse_options(std::vector<std::string>{"--n", "4K"}, spec));
  const std::string u = reduce::usage("x", "y", spec);
  EXPECT_NE(u.find("refused here: the kernel reads zeros"), std::string::npos) << u;
  EXPECT_NE(u.find("refused here: GPUs 0 .. N-1"), std::string::npos) << u;
  EXPECT_EQ(u.find("small integers"), std::string::npos) << u;
}

// Counts at and past the int64 range: refused whatever the spelling, never wrapped to a small or
// negative n (2^62 is in range of the type but past max_n(), and so refused too).
TEST(ParseCount, RefusesCountsPastTheLargestN) {
  for (const char* bad : {"2^62", "2^63", "2^64", "2^100", "9223372036854775807", "9223372036854775808",
                          "18446744073709551616", "9007199254740993", "8589934592G", "9223372036854775807K"})
    EXPECT_FALSE(parse_count(bad).has_value()) << "'" << bad << "'";
  for (const char* bad : {"2^62", "2^63", "9223372036854775808", "2^64"}) {
    const std::string msg = error_of({"--n", bad});
    EXPECT_NE(msg.find("--n"), std::string::npos) << bad << ": " << msg;
    EXPECT_NE(msg.find(bad), std::string::npos) << msg;
  }
}

// --help is a flag: a value given to it is refused, naming it (as for every flag).
TEST(ParseOptions, HelpTakesNoValue) {
  for (const char* arg : {"--help=yes", "--help=", "-h=1"}) {
    const std::string msg = error_of({arg});
    EXPECT_NE(msg.find(std::string(arg).substr(0, std::string(arg).find('='))), std::string::npos)
        << arg << ": " << msg;
    EXPECT_NE(msg.find("takes no value"), std::string::npos) << msg;
  }
}

// A value echoed in a message is quoted: one line, at most about 80 characters of it, control and
// non-UTF-8 bytes escaped (common/files.hpp, quote()).
TEST(ParseOptions, ValuesInMessagesAreQuotedOnOneBoundedLine) {
  std::string binary;
  for (int i = 1; i < 256; ++i) binary += static_cast<char>(i);
  const std::string big(100 * 1024, '9');
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--n", "12\nexit 0"}, std::vector<std::string>{"--pattern=" + binary},
        std::vector<std::string>{"--seed", big}, std::vector<std::string>{"--frob\nnicate"},
        std::vector<std::string>{"stray\r\n" + big}, std::vector<std::string>{"--format", "\xff\xfe"}}) {
    const std::string msg = error_of(args);
    ASSERT_FALSE(msg.empty());
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\r'), std::string::npos) << msg;
    EXPECT_LT(msg.size(), 300u) << msg;  // the value shown cut short, then the accepted values
    for (unsigned char c : msg) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "byte " << int(c) << " in " << msg;
  }
  EXPECT_NE(error_of({"--n", "12\nexit 0"}).find("'12\\nexit 0'"), std::string::npos);
  EXPECT_NE(error_of({"--seed", big}).find("... (102400 bytes)"), std::string::npos);
}

TEST(BoundOptions, StoreTypedValuesInTheirFieldsAndKeepDefaults) {
  std::int64_t grid = 0;
  std::string file, type;
  bool single = false;
  reduce::OptionSpec spec;
  spec.extra = {reduce::integer_option("--grid", grid, 1, 1 << 20, "blocks"),
                reduce::text_option("--out", file, "a file", "FILE"),
                reduce::flag_option("--single", single, "one GPU"),
                reduce::choice_option("--type", type, {"float", "double"}, "element type")};
  EXPECT_EQ(type, "float");  // a choice's field starts at its first value, the default
  parse_options(std::vector<std::string>{}, spec);
  EXPECT_EQ(grid, 0);
  EXPECT_EQ(file, "");
  EXPECT_FALSE(single);
  parse_options(std::vector<std::string>{"--grid", "4096", "--out=x.txt", "--single", "--type", "double"}, spec);
  EXPECT_EQ(grid, 4096);
  EXPECT_EQ(file, "x.txt");
  EXPECT_TRUE(single);
  EXPECT_EQ(type, "double");
  for (const std::vector<std::string> bad : {std::vector<std::string>{"--grid", "0"},
                                             {"--grid", "1.5"},
                                             {"--out", ""},
                                             {"--single=1"},
                                             {"--type", "half"}}) {
    grid = 7;
    EXPECT_THROW(parse_options(bad, spec), UsageError) << bad[0];
    EXPECT_EQ(grid, 7) << "a refused value leaves the field as it was";
  }
  EXPECT_NE(reduce::usage("p", nullptr, spec).find("--grid N"), std::string::npos);
}
