// --offsets FILE read as a careful tool reads (segments.cpp, read_offsets): what is not a regular file is
// refused without blocking, a read error is named, and a bad token is quoted on one bounded line.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "segments.hpp"
#include "usage_error.hpp"

namespace {

// read_offsets' one-line message for path, or "" when it reads.
std::string read_error(const std::string& path) {
  return usage_error([&] { seg::read_offsets(path); });
}

TEST(OffsetsFile, RefusesWhatIsNotARegularFileAtOnce) {
  const TempFolder folder;
  const std::string dir = folder.path(), fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::pair<std::string, std::string> cases[] = {
      {fifo, "is a FIFO"},                      // no writer: it must not wait for one
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
  EXPECT_NE(big.find("... (10000001 bytes)"), std::string::npos) << big.substr(0, 300);
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
  std::ofstream(path) << "\t0\r\n+3 \v 7\f-1";
  EXPECT_EQ(seg::read_offsets(path), (seg::Offsets{0, 3, 7, -1}));
  std::ofstream(path) << "0 +-3";
  EXPECT_NE(read_error(path).find("'+-3'"), std::string::npos);
  std::ofstream(path) << "";
  EXPECT_TRUE(seg::read_offsets(path).empty());  // validate_offsets() then says "no entries"
}

}  // namespace
