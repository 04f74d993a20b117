// Helpers of the CPU tests that exercise files and messages: the one-line message a call throws, and a
// fresh folder to make files in.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include <gtest/gtest.h>

#include "options.hpp"

// The reduce::UsageError message of f(), or "" when it throws none.
template <typename F>
std::string usage_error(F f) {
  try {
    f();
  } catch (const reduce::UsageError& e) {
    return e.what();
  }
  return "";
}

// A new empty folder of a unique name under the test's temporary folder, removed with everything in it
// when the test ends: concurrent runs never share a file, and no run leaves one behind.
class TempFolder {
 public:
  TempFolder() : path_(::testing::TempDir() + "reduce_test_XXXXXX") {
    if (mkdtemp(path_.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed under " << ::testing::TempDir();
  }
  ~TempFolder() {
    std::error_code ignored;  // a destructor cannot fail the test; links inside are removed, not followed
    std::filesystem::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};
