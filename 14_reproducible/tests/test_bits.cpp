// The bits check (bits.hpp), on the CPU: every value column compared, a missing case fails unless a
// subset is asked for, a case that is not committed fails, and a malformed file is refused by line.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "14_reproducible/bits.hpp"

namespace {

float float_of(const std::string& bits) {
  if (bits == "nan") return std::nanf("");
  const std::uint32_t w = static_cast<std::uint32_t>(std::stoul(bits, nullptr, 16));
  float f;
  std::memcpy(&f, &w, sizeof f);
  return f;
}

// Runs a check as 14_reproducible_bits does, with the committed file's own bits as "this run's"
// results: what differs then is only what the test changed in the file.
step14::BitsCheck run_check(const std::vector<step14::BitsEntry>& file, bool subset) {
  const auto committed = step14::read_bits_file(REPRO_BITS_FILE);
  step14::BitsCheck check(file, subset);
  for (const step14::BitsCase& c : check.cases())
    for (const auto& e : committed)
      if (step14::case_text(e.c) == step14::case_text(c)) check.verdict(c, float_of(e.bits));
  return check;
}

std::string parse_error(const std::string& text) {
  try {
    step14::parse_bits_text(text, "t.txt");
  } catch (const reduce::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(BitsCheck, TheCommittedFilePassesWhole) {
  const auto committed = step14::read_bits_file(REPRO_BITS_FILE);
  const step14::BitsCheck check = run_check(committed, false);
  EXPECT_TRUE(check.passed()) << check.summary("f");
  EXPECT_EQ(check.compared(), static_cast<int>(step14::bits_cases().size()));
  const std::string all = std::to_string(step14::bits_cases().size());
  EXPECT_EQ(check.summary("f").rfind("PASSED: " + all + " of " + all + " cases", 0), 0u) << check.summary("f");
}

TEST(BitsCheck, ATruncatedFileFailsUnlessASubsetIsAskedFor) {
  auto file = step14::read_bits_file(REPRO_BITS_FILE);
  file.resize(5);
  const step14::BitsCheck whole = run_check(file, false);
  EXPECT_FALSE(whole.passed());
  EXPECT_EQ(whole.compared(), 5);
  EXPECT_EQ(whole.missing(), static_cast<int>(step14::bits_cases().size()) - 5);
  const std::string missing = std::to_string(whole.missing()) + " of the " +
                              std::to_string(step14::bits_cases().size()) + " committed cases are missing";
  EXPECT_NE(whole.summary("t").find(missing), std::string::npos) << whole.summary("t");
  const step14::BitsCheck subset = run_check(file, true);
  EXPECT_EQ(subset.cases().size(), 5u);
  EXPECT_TRUE(subset.passed()) << subset.summary("t");
  EXPECT_EQ(subset.summary("t").rfind("PASSED: 5 of 5", 0), 0u) << subset.summary("t");
}

TEST(BitsCheck, AChangedValueOrBitsFails) {
  for (const bool change_value : {true, false}) {
    auto file = step14::read_bits_file(REPRO_BITS_FILE);
    step14::BitsEntry& e = file[9];  // 31 int 1: -5
    if (change_value)
      e.value_bits = step14::bits_text(-4.0f), e.value = "-4";  // as parse_bits_text would read "-4"
    else
      e.bits = step14::bits_text(-4.0f);
    for (const bool subset : {false, true}) {
      const step14::BitsCheck check = run_check(file, subset);
      EXPECT_FALSE(check.passed());
      EXPECT_EQ(check.differ(), 1);
      EXPECT_NE(check.summary("t").find("; 1 differ"), std::string::npos) << check.summary("t");
    }
    step14::BitsCheck one(file, true);
    const std::string verdict = one.verdict(e.c, -5.0f);
    EXPECT_EQ(verdict.rfind("DIFFERS: ", 0), 0u) << verdict;
    EXPECT_NE(verdict.find(change_value ? "value '-4'" : "bits 0xc0800000"), std::string::npos) << verdict;
  }
}

TEST(BitsCheck, ACaseThatIsNotCommittedFailsAndNothingComparedFails) {
  auto file = step14::read_bits_file(REPRO_BITS_FILE);
  file.push_back({{2, reduce::Pattern::uniform, 1}, "0x3f800000", "1", "0x3f800000", 99});
  for (const bool subset : {false, true}) {
    const step14::BitsCheck check = run_check(file, subset);
    EXPECT_FALSE(check.passed());
    EXPECT_EQ(check.not_run(), 1);
    EXPECT_NE(check.summary("t").find("not committed cases"), std::string::npos) << check.summary("t");
  }
  const step14::BitsCheck none(file, true);
  EXPECT_FALSE(none.passed()) << "no verdict: nothing was compared";
}

TEST(BitsFile, ReadsTheValueColumnAndNormalizesTheBits) {
  const auto e =
      step14::parse_bits_text("# c\nn pattern seed bits value\n31 int 1 0xC0A00000 -5.0\n100003 nan 1 nan nan\n", "t");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].bits, "0xc0a00000");
  EXPECT_EQ(e[0].value_bits, "0xc0a00000");
  EXPECT_EQ(e[0].line, 3);
  EXPECT_EQ(e[1].bits, "nan");
  EXPECT_EQ(e[1].value_bits, "nan");
}

TEST(BitsFile, RefusesAMalformedLineQuotedAndBounded) {
  for (const std::string& bad : {std::string("31 int 1 0xc0a00000\n"),           // no value
                                 std::string("31 int 1 0xc0a00000 -5 same\n"),   // a field more
                                 std::string("31 int 1 0xc0a0000g -5\n"),        // not hex
                                 std::string("31 int 1 0xc0a00000 five\n"),      // not a number
                                 std::string("31 ties 1 0xc0a00000 -5\n"),       // no such pattern
                                 std::string("2^5 int 1 0xc0a00000 -5\n"),       // n as the file writes it
                                 std::string("31 int -1 0xc0a00000 -5\n"),       // a seed is not negative
                                 std::string("31 int 1 0xc0a00000 -5\0\n", 24),  // a NUL byte
                                 "31 int 1 0xc0a00000 -5" + std::string(100000, 'x') + "\n"}) {
    const std::string msg = parse_error(bad);
    EXPECT_EQ(msg.rfind("'t.txt' line 1: not 'n pattern seed bits value': '", 0), 0u) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_LT(msg.size(), 200u) << msg;
  }
  EXPECT_NE(parse_error(std::string("31 int 1 0xc0a00000 -5\0\n", 24)).find("\\x00"), std::string::npos);
  const std::string twice = parse_error("31 int 1 0xc0a00000 -5\n1 int 1 0xc0000000 -2\n31 int 1 0xc0a00000 -5\n");
  EXPECT_NE(twice.find("line 3: case 31 int 1 repeats line 1"), std::string::npos) << twice;
}

}  // namespace
