// Helpers of the CPU tests that exercise files and messages: the one-line message a call throws, and a
// fresh folder to make files in.
#pragma once

#include <cstdlib>
#include <string>

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

// A new empty folder under the test's temporary folder.
inline std::string temp_dir() {
  std::string t = ::testing::TempDir() + "files_XXXXXX";
  EXPECT_NE(mkdtemp(t.data()), nullptr);
  return t;
}
