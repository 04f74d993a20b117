// Statistics and the three report formats.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <string>

#include "report.hpp"

namespace {

reduce::Report sample_report() {
  reduce::Report r;
  r.step = "01_interleaved";
  r.lesson = "interleaved tree, \"quoted\", with commas";
  r.device.name = "Test GPU";
  r.device.cc_major = 9;
  r.device.sm_count = 132;
  r.device.sm_clock_mhz = 1980;
  r.device.mem_clock_mhz = 2619;
  r.device.l2_bytes = 50 << 20;
  r.device.peak_gbps = 3352.0;
  r.device.runtime_version = 13000;
  r.device.driver_version = 13000;
  r.n = 1 << 26;
  r.iters = 50;
  r.ms = {0.1, 0.09, 0.2};
  r.cpu_ms = 80.0;
  r.result = 33554432.0;
  r.reference = 33554432.0;
  r.passed = true;
  r.runs_total = r.runs_correct = 55;
  reduce::derive_rates(r);
  return r;
}

int count(const std::string& s, char c) { return static_cast<int>(std::count(s.begin(), s.end(), c)); }

}  // namespace

TEST(Summarize, MedianMinMax) {
  const auto odd = reduce::summarize({5, 1, 3});
  EXPECT_EQ(odd.median, 3);
  EXPECT_EQ(odd.min, 1);
  EXPECT_EQ(odd.max, 5);
  EXPECT_EQ(reduce::summarize({4, 1, 3, 2}).median, 2.5);
  EXPECT_EQ(reduce::summarize({7}).median, 7);
  EXPECT_EQ(reduce::summarize({}).median, 0);
}

TEST(Rates, DecimalGigabytesOfBytesRead) {
  const reduce::Report r = sample_report();
  EXPECT_DOUBLE_EQ(r.gbps, (1 << 26) * 4.0 / 0.1e-3 / 1e9);  // 2684.35 GB/s, not GiB/s
  EXPECT_DOUBLE_EQ(r.pct_peak, 100.0 * r.gbps / 3352.0);
  EXPECT_DOUBLE_EQ(r.speedup_vs_cpu, 800.0);
  // H100 SXM: 2619 MHz HBM3 on a 5120-bit bus.
  EXPECT_NEAR(reduce::theoretical_gbps(2619000, 5120), 3352.3, 0.1);
}

TEST(Format, CsvHeaderAndRowHaveTheSameColumns) {
  const reduce::Report r = sample_report();
  const std::string header = reduce::csv_header(), row = reduce::format_csv(r);
  EXPECT_EQ(header.rfind("schema,commit,commit_dirty,step,lesson,", 0), 0u) << header;
  // The lesson holds two commas inside quotes; quotes are doubled.
  EXPECT_NE(row.find("\"interleaved tree, \"\"quoted\"\", with commas\""), std::string::npos) << row;
  EXPECT_EQ(count(header, ','), count(row, ',') - 2);
  EXPECT_EQ(row.find('\n'), std::string::npos);
}

TEST(Format, JsonIsOneObjectWithEveryField) {
  reduce::Report r = sample_report();
  r.result = std::nan("");
  const std::string j = reduce::format_json(r);
  EXPECT_EQ(j.front(), '{');
  EXPECT_EQ(j.back(), '}');
  EXPECT_EQ(j.find('\n'), std::string::npos);
  EXPECT_NE(j.find("\"lesson\": \"interleaved tree, \\\"quoted\\\", with commas\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"result\": null"), std::string::npos) << "NaN must become null: " << j;
  EXPECT_NE(j.find("\"passed\": true"), std::string::npos);
  EXPECT_NE(j.find("\"n\": 67108864"), std::string::npos);
  // Every csv column is a json key.
  std::string header = reduce::csv_header() + ",";
  for (std::size_t at = 0, next; (next = header.find(',', at)) != std::string::npos; at = next + 1)
    EXPECT_NE(j.find("\"" + header.substr(at, next - at) + "\":"), std::string::npos) << header.substr(at, next - at);
}

// A record says what it is: the schema of its fields, the full commit of the build, and the GPU with the
// clocks it reported when the run opened it.
TEST(Format, RecordsCarryTheirSchemaCommitAndClocks) {
  const reduce::Report r = sample_report();
  const std::string j = reduce::format_json(r);
  EXPECT_EQ(j.rfind("{\"schema\": " + std::to_string(reduce::kRecordSchema) + ", \"commit\": \"", 0), 0u) << j;
  EXPECT_EQ(reduce::kRecordSchema, 2);
  const std::string commit = reduce::build_commit();
  EXPECT_TRUE(commit == "unknown" ||
              (commit.size() == 40 && commit.find_first_not_of("0123456789abcdef") == std::string::npos))
      << "not a full commit: " << commit;
  EXPECT_NE(j.find("\"commit\": \"" + commit + "\""), std::string::npos) << j;
  EXPECT_NE(j.find(std::string("\"commit_dirty\": ") + (reduce::build_commit_dirty() ? "true" : "false")),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"device\": \"Test GPU\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"sm_clock_mhz\": 1980"), std::string::npos) << j;
  EXPECT_NE(j.find("\"mem_clock_mhz\": 2619"), std::string::npos) << j;
  const std::string header = reduce::csv_header(), row = reduce::format_csv(r);
  EXPECT_EQ(row.rfind("2," + commit + ",", 0), 0u) << row;
  EXPECT_NE(header.find(",sm_clock_mhz,mem_clock_mhz,"), std::string::npos) << header;
}

TEST(Format, TextShowsTheVerdictAndTheFigures) {
  reduce::Report r = sample_report();
  std::string t = reduce::format_text(r);
  EXPECT_NE(t.find("PASS"), std::string::npos);
  EXPECT_NE(t.find("Test GPU"), std::string::npos);
  EXPECT_NE(t.find("67108864 (2^26)"), std::string::npos);
  EXPECT_NE(t.find("GB/s"), std::string::npos);
  EXPECT_NE(t.find("% of theoretical peak"), std::string::npos);
  EXPECT_NE(t.find("speedup"), std::string::npos);
  r.passed = false;
  t = reduce::format_text(r);
  EXPECT_NE(t.find("FAIL"), std::string::npos);
  EXPECT_EQ(t.find("PASS"), std::string::npos);
}

TEST(Format, CountsShowPowersOfTwo) {
  EXPECT_EQ(reduce::format_count(1 << 20), "1048576 (2^20)");
  EXPECT_EQ(reduce::format_count(1000003), "1000003");
  EXPECT_EQ(reduce::format_count(0), "0");
}

// The JSON pieces that programs with records of their own (13_segmented, read_ceiling) use.
TEST(Format, JsonPiecesAreValidJson) {
  EXPECT_EQ(reduce::json_string("NVIDIA \"H200\"\\x"), "\"NVIDIA \\\"H200\\\"\\\\x\"");
  EXPECT_EQ(reduce::json_string(std::string("a\nb")), "\"ab\"");
  EXPECT_EQ(reduce::json_number(0.5), "0.5");
  EXPECT_EQ(reduce::json_number(std::nan("")), "null");
  EXPECT_EQ(reduce::json_number(-HUGE_VAL), "null");
}
