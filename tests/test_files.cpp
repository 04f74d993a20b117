// Files and messages (common/files.hpp): values quoted on one bounded line; reads that refuse what is not
// a regular file and never block; writes that replace only a regular file; lost stdout detected.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "files.hpp"
#include "options.hpp"
#include "usage_error.hpp"

#ifndef GTEST_FLAG_SET  // GoogleTest before 1.12 (Ubuntu 22.04's 1.11)
#define GTEST_FLAG_SET(name, value) (void)(::testing::GTEST_FLAG(name) = value)
#endif

namespace {

using reduce::quote;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The names in a folder (hidden ones too, the temporary files among them), sorted.
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Quote, EscapesControlBytesAndBytesThatAreNotUtf8) {
  EXPECT_EQ(quote("abc"), "'abc'");
  EXPECT_EQ(quote("a\nb"), "'a\\nb'");
  EXPECT_EQ(quote("tab\there\r"), "'tab\\there\\r'");
  EXPECT_EQ(quote(std::string("x\0y", 3)), "'x\\x00y'");
  EXPECT_EQ(quote("\x1b[31m"), "'\\x1B[31m'");
  EXPECT_EQ(quote("it's a\\b"), "'it\\'s a\\\\b'");
  EXPECT_EQ(quote("\xff\xfe"), "'\\xFF\\xFE'");                                // never UTF-8
  EXPECT_EQ(quote("\xc3"), "'\\xC3'");                                         // cut short
  EXPECT_EQ(quote("\xed\xa0\x80"), "'\\xED\\xA0\\x80'");                       // a surrogate
  EXPECT_EQ(quote("\xc2\x9b"), "'\\xC2\\x9B'");                                // U+009B, a terminal's CSI
  EXPECT_EQ(quote("caf\xc3\xa9 \xe2\x82\xac"), "'caf\xc3\xa9 \xe2\x82\xac'");  // UTF-8 kept
}

TEST(Quote, ShowsAtMostEightyCharactersThenTheLength) {
  const std::string big(100 * 1024, 'v');
  const std::string q = quote(big);
  EXPECT_EQ(q, "'" + std::string(80, 'v') + "'... (102400 bytes)");
  EXPECT_EQ(quote(std::string(80, 'v')), "'" + std::string(80, 'v') + "'");
  // Binary without NUL: escaped, still bounded, one line, never an escape cut in half.
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary += static_cast<char>(1 + i % 255);
  const std::string b = quote(binary);
  EXPECT_EQ(b.find('\n'), std::string::npos);
  EXPECT_LT(b.size(), 120u);
  EXPECT_NE(b.find("\\x01\\x02"), std::string::npos) << b;
  EXPECT_NE(b.find("'... (4096 bytes)"), std::string::npos) << b;
}

TEST(ReadTextFile, ReadsARegularFile) {
  const TempFolder folder;
  const std::string dir = folder.path(), path = dir + "/a.txt";
  std::ofstream(path) << "0 1 2\n";
  EXPECT_EQ(reduce::read_text_file(path, "--offsets", 100), "0 1 2\n");
  EXPECT_EQ(reduce::read_text_file("/proc/self/status", "--offsets", 1 << 20).rfind("Name:", 0), 0u);
}

TEST(ReadTextFile, RefusesWhatIsNotARegularFileWithoutBlocking) {
  const TempFolder folder;
  const std::string dir = folder.path(), fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::pair<std::string, std::string> cases[] = {
      {fifo, "is a FIFO"},  // no writer: an open without O_NONBLOCK would wait forever
      {dir, "is a folder"},
      {"/dev/zero", "is a character device"},
      {"/dev/null", "is a character device"},
      {dir + "/missing", "cannot read"},
  };
  for (const auto& [path, says] : cases) {
    const std::string msg = usage_error([&] { reduce::read_text_file(path, "--offsets", 1 << 20); });
    EXPECT_EQ(msg.rfind("--offsets: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(says), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(ReadTextFile, AReadErrorSaysSoAndTheSizeIsBounded) {
  const std::string mem = usage_error([] { reduce::read_text_file("/proc/self/mem", "--offsets", 1 << 20); });
  EXPECT_NE(mem.find("cannot read '/proc/self/mem': "), std::string::npos) << mem;
  const TempFolder folder;
  const std::string dir = folder.path(), path = dir + "/big.txt";
  std::ofstream(path) << std::string(2000, '1');
  const std::string big = usage_error([&] { reduce::read_text_file(path, "--check", 1024); });
  EXPECT_NE(big.find("larger than 1024 bytes"), std::string::npos) << big;
  // A /proc file's size is 0 until read: the bound holds while reading too.
  const std::string proc = usage_error([] { reduce::read_text_file("/proc/self/maps", "--check", 16); });
  EXPECT_NE(proc.find("larger than 16 bytes"), std::string::npos) << proc;
}

// Words as the file is read: numbered, split on any white space, a long one handed over cut (once).
TEST(ForEachWord, NumbersWordsAndCutsALongOne) {
  const TempFolder folder;
  const std::string path = folder / "words.txt";
  std::ofstream(path) << "\ta  bb\r\n" << std::string(100000, 'x') << "\vccc\f";
  std::vector<std::string> seen;
  reduce::for_each_word(path, "--words", 1 << 20, 8, [&](const reduce::Word& w) {
    seen.push_back(std::to_string(w.index) + (w.cut ? "cut:" : ":") + std::string(w.text));
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"0:a", "1:bb", "2cut:xxxxxxxx", "3:ccc"}));
  const std::string msg =
      usage_error([&] { reduce::for_each_word(path, "--words", 1000, 8, [](const reduce::Word&) {}); });
  EXPECT_NE(msg.find("larger than 1000 bytes"), std::string::npos) << msg;
}

TEST(FileWriter, CreatesAndReplacesARegularFileByRename) {
  const TempFolder folder;
  const std::string dir = folder.path(), path = dir + "/out.txt";
  {
    reduce::FileWriter w(path, "--write");
    w.commit("one\n");
  }
  EXPECT_EQ(slurp(path), "one\n");
  chmod(path.c_str(), 0640);
  struct stat before {
  }, after{};
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  {
    reduce::FileWriter w(path, "--write");
    EXPECT_EQ(slurp(path), "one\n");  // untouched until commit
    w.commit("two\n");
  }
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  EXPECT_EQ(slurp(path), "two\n");
  EXPECT_NE(before.st_ino, after.st_ino);  // a new file renamed over it
  EXPECT_EQ(after.st_mode & 0777, 0640u);  // with the old one's mode
  {
    reduce::FileWriter abandoned(path, "--write");  // no commit: the file stays, no temporary is left
  }
  EXPECT_EQ(slurp(path), "two\n");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"out.txt"}) << "a temporary file was left in " << dir;
}

TEST(FileWriter, ASymlinkStaysASymlinkAndItsTargetIsWritten) {
  const TempFolder folder;
  const std::string dir = folder.path(), target = dir + "/target.txt", link = dir + "/link.txt";
  std::ofstream(target) << "old\n";
  ASSERT_EQ(symlink("target.txt", link.c_str()), 0);
  reduce::FileWriter(link, "--write").commit("new\n");
  struct stat st {};
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(slurp(target), "new\n");
  const std::string dangling = dir + "/dangling";
  ASSERT_EQ(symlink("nowhere/x", dangling.c_str()), 0);
  EXPECT_NE(usage_error([&] { reduce::FileWriter(dangling, "--write"); }).find("symlink to nothing"),
            std::string::npos);
}

TEST(FileWriter, ADeviceIsWrittenInPlaceNeverReplaced) {
  reduce::FileWriter(std::string("/dev/null"), "--write").commit(std::string(4096, 'x'));
  struct stat st {};
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null is no longer a character device";
  // A full device: the write fails at commit, as lost output (exit 1), with the reason.
  reduce::FileWriter full("/dev/full", "--write");
  try {
    full.commit("x\n");
    ADD_FAILURE() << "a write to /dev/full succeeded";
  } catch (const reduce::OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write '/dev/full': "), std::string::npos) << e.what();
  }
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(FileWriter, RefusesAFolderAndAFifoWithoutAReader) {
  const TempFolder folder;
  const std::string dir = folder.path(), fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(usage_error([&] { reduce::FileWriter(dir, "--write"); }).find("is a folder"), std::string::npos);
  EXPECT_NE(usage_error([&] { reduce::FileWriter(fifo, "--write"); }).find("FIFO that no process reads"),
            std::string::npos);
  struct stat st {};
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  const std::string bad = usage_error([] { reduce::FileWriter("/nonexistent_folder/x\ny", "--write"); });
  EXPECT_NE(bad.find("cannot write '/nonexistent_folder/x\\ny': "), std::string::npos) << bad;
}

// SIGINT or SIGTERM while files are being written (before commit): the process ends by that signal, as
// without a handler, the old file is untouched, and no temporary file is left beside either target.
// "fast": the child is a fork, so it writes in the folder the parent then looks into.
TEST(FileWriterDeathTest, AnInterruptLeavesNoTemporaryFile) {
  GTEST_FLAG_SET(death_test_style, "fast");
  for (const int sig : {SIGINT, SIGTERM}) {
    const TempFolder folder;
    const std::string old_file = folder / "old.txt", new_file = folder / "new.txt";
    std::ofstream(old_file) << "old\n";
    EXPECT_EXIT(
        {
          reduce::FileWriter replace(old_file, "--write");
          reduce::FileWriter create(new_file, "--write-cases");
          if (names_in(folder.path()).size() != 3) std::exit(3);  // both temporary files exist
          kill(getpid(), sig);                                    // process-directed, as ^C or kill sends it
          sleep(10);
          std::exit(4);
        },
        testing::KilledBySignal(sig), "")
        << strsignal(sig);
    EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"old.txt"}) << strsignal(sig);
    EXPECT_EQ(slurp(old_file), "old\n");
  }
}

// A signal the process was started with ignored (nohup, a background job) stays ignored.
TEST(FileWriterDeathTest, AnIgnoredSignalStaysIgnored) {
  GTEST_FLAG_SET(death_test_style, "fast");
  const TempFolder folder;
  EXPECT_EXIT(
      {
        signal(SIGHUP, SIG_IGN);
        {
          reduce::FileWriter w(folder / "out.txt", "--write");
          kill(getpid(), SIGHUP);
          w.commit("done\n");
        }
        std::exit(0);  // no unwinding: the parent's folder stays for it to look into
      },
      testing::ExitedWithCode(0), "");
  EXPECT_EQ(slurp(folder / "out.txt"), "done\n");
  EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"out.txt"});
}

// The tests' own folders: unique, and gone with everything in them (a link's target stays) when the test ends.
TEST(TempFolder, IsUniqueAndLeavesNothingBehind) {
  std::string kept, inside;
  const TempFolder outside;
  {
    const TempFolder a, b;
    EXPECT_NE(a.path(), b.path());
    kept = a.path();
    inside = outside / "kept.txt";
    std::ofstream(inside) << "stays\n";
    ASSERT_EQ(mkdir((a / "sub").c_str(), 0700), 0);
    std::ofstream(a / "sub/x.txt") << "x\n";
    ASSERT_EQ(mkfifo((a / "fifo").c_str(), 0600), 0);
    ASSERT_EQ(symlink(inside.c_str(), (a / "link").c_str()), 0);
  }
  struct stat st {};
  EXPECT_NE(lstat(kept.c_str(), &st), 0) << kept << " is still there";
  EXPECT_EQ(slurp(inside), "stays\n");
}

// Lost output: stdout on /dev/full is found at the flush, with the reason.
TEST(FlushStdout, ReportsAFullDevice) {
  std::fflush(stdout);
  const int saved = dup(STDOUT_FILENO), full = open("/dev/full", O_WRONLY);
  ASSERT_GE(full, 0);
  dup2(full, STDOUT_FILENO);
  std::cout << "lost\n";
  const std::string why = reduce::flush_stdout();
  dup2(saved, STDOUT_FILENO);
  close(saved);
  close(full);
  std::clearerr(stdout);
  std::cout.clear();
  EXPECT_NE(why.find("No space left"), std::string::npos) << why;
  EXPECT_EQ(reduce::flush_stdout(), "");
}

}  // namespace
