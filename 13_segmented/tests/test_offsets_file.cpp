// --offsets FILE read as a careful tool reads (segments.cpp, read_offsets): what is not a regular file is
// refused without blocking, a read error is named, a bad token is quoted on one bounded line, and the
// file is streamed: the first bad entry is refused at once, not after reading the whole file.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "13_segmented/segments.hpp"
#include "tests/usage_error.hpp"

namespace {

constexpr std::int64_t kN = std::int64_t{1} << 40;  // n for reads that test the file, not the values

// read_offsets' one-line message for path, or "" when it reads.
std::string read_error(const std::string& path, std::int64_t n = kN) {
  return usage_error([&] { step13::read_offsets(path, n); });
}

// The bytes this process has read so far (rchar of /proc/self/io), or -1 where the kernel does not say.
std::int64_t bytes_read_so_far() {
  std::ifstream io("/proc/self/io");
  std::string key;
  std::int64_t value = 0;
  while (io >> key >> value)
    if (key == "rchar:") return value;
  return -1;
}

TEST(OffsetsFile, RefusesWhatIsNotARegularFileAtOnce) {
  const TempFolder folder;
  const std::string dir = folder.path(), fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::pair<std::string, std::string> cases[] = {
      {fifo, "is a FIFO"},                     // no writer: it must not wait for one
      {"/dev/zero", "is a character device"},  // never ends
      {dir, "is a folder"},
      {dir + "/missing", "cannot read"},
      {"/proc/self/mem", "cannot read '/proc/self/mem': "},  // a read error, not "no entries"
  };
  for (const auto& [path, says] : cases) {
    const std::string msg = read_error(path);
    EXPECT_EQ(msg.rfind("--offsets: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(says), std::string::npos) << path << ": " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(OffsetsFile, ABadTokenIsQuotedAndBounded) {
  const TempFolder folder;
  const std::string dir = folder.path(), path = dir + "/offsets.txt";
  std::ofstream(path) << "0 5 " << std::string(10 * 1000 * 1000, '7') << "x\n";  // a 10 MB token
  const std::string big = read_error(path);
  EXPECT_NE(big.find("(entry 2) is not an integer"), std::string::npos) << big.substr(0, 300);
  EXPECT_NE(big.find("'7777777777777777'... (over 64 bytes)"), std::string::npos) << big.substr(0, 300);
  EXPECT_LT(big.size(), 300u);
  std::ofstream(path) << std::string("0 1\0002 3\n", 8);  // a NUL byte: shown, not an end of the message
  const std::string nul = read_error(path);
  EXPECT_NE(nul.find("'1\\x002'"), std::string::npos) << nul;
  EXPECT_NE(nul.find("(entry 1)"), std::string::npos) << nul;
  std::ofstream(path) << "0 99999999999999999999\n";  // past 64 bits
  EXPECT_NE(read_error(path).find("'99999999999999999999'"), std::string::npos);
  const std::string weird = dir + "/a\nb.txt";  // a newline in the path stays escaped
  std::ofstream(weird) << "0 x\n";
  const std::string msg = read_error(weird);
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_NE(msg.find("a\\nb.txt'"), std::string::npos) << msg;
}

TEST(OffsetsFile, ReadsSignsAndAnyWhiteSpace) {
  const TempFolder folder;
  const std::string dir = folder.path(), path = dir + "/offsets.txt";
  std::ofstream(path) << "\t0\r\n+3 \v 7\f+10";
  EXPECT_EQ(step13::read_offsets(path, 10), (step13::Offsets{0, 3, 7, 10}));
  std::ofstream(path) << "0 +-3";
  EXPECT_NE(read_error(path).find("'+-3'"), std::string::npos);
  std::ofstream(path) << "00000000000000000000000000000000000000000000000000000000000000005";  // 65 bytes
  EXPECT_NE(read_error(path).find("(over 64 bytes)"), std::string::npos);
  std::ofstream(path) << "";
  EXPECT_TRUE(step13::read_offsets(path, 10).empty());  // validate_offsets() then says "no entries"
}

// Words that cross the reader's 64 KiB pieces come out whole.
TEST(OffsetsFile, ReadsAFileOfManyPieces) {
  const TempFolder folder;
  const std::string path = folder / "offsets.txt";
  step13::Offsets expected;
  std::ostringstream text;
  for (std::int64_t i = 0; i < 200000; ++i) {
    expected.push_back(i * 1000003);
    text << expected.back() << (i % 7 == 0 ? "\n" : i % 3 == 0 ? " \t " : " ");
  }
  std::ofstream(path) << text.str();
  ASSERT_GT(text.str().size(), 20u << 16);
  EXPECT_EQ(step13::read_offsets(path, expected.back()), expected);
}

// The values are checked as they are read, by validate_offsets' rules and messages: the first bad entry
// of a 1 GiB file is refused after its first piece, not after the whole gigabyte (a sparse file: it takes
// no disk).
TEST(OffsetsFile, RefusesTheFirstBadEntryAtOnce) {
  const TempFolder folder;
  const std::string path = folder / "offsets.txt";
  const std::pair<std::string, std::string> cases[] = {
      {"0 5 x 7 ", "'x' in "},
      {"-1 5 ", "offsets[0] = -1 is negative"},
      {"0 5 3 ", "not monotone: offsets[2] = 3 < offsets[1] = 5"},
      {"0 50 101 ", "offsets[2] = 101 is beyond n = 100"},
      {std::string(1000, '7'), "(over 64 bytes)"},
  };
  for (const auto& [start, says] : cases) {
    std::ofstream(path) << start;
    ASSERT_EQ(truncate(path.c_str(), step13::kMaxOffsetsFileBytes), 0);
    const std::int64_t before = bytes_read_so_far();
    const std::string msg = read_error(path, 100);
    const std::int64_t read = bytes_read_so_far() - before;
    EXPECT_NE(msg.find(says), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    if (before >= 0) EXPECT_LT(read, 1 << 20) << start << ": read " << read << " bytes before refusing it";
  }
}

}  // namespace
