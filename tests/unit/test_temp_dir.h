// A folder of one test case under the system's temporary directory, named
// by the prefix, the process and the test (CTest runs the cases of a suite
// in parallel), created empty; the fixture removes it in TearDown.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace chakrashim::testing_support {

inline std::filesystem::path make_test_dir(const std::string& prefix) {
  const auto dir = std::filesystem::temp_directory_path() /
                   (prefix + "-" + std::to_string(::getpid()) + "-" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace chakrashim::testing_support
