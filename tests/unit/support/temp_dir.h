// A folder of one test case under the system's temporary directory, named
// by the prefix, the process and the test (CTest runs the cases of a suite
// in parallel), created empty; and the fixture of tests whose files live
// there, which removes it when the case ends.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace chakrashim::testing_support {

inline std::filesystem::path make_test_dir(const std::string& prefix) {
  const auto dir = std::filesystem::temp_directory_path() /
                   (prefix + "-" + std::to_string(::getpid()) + "-" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);  // an earlier run's, of a process with this pid
  std::filesystem::create_directories(dir);
  return dir;
}

// The fixture of a suite whose cases work in a folder of their own, dir_
// (make_test_dir, the suite's name its prefix), removed when the case ends.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_test_dir(std::string("chakra-") +
                         ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name());
  }
  void TearDown() override {
    std::error_code ignored;  // never throws in TearDown: a case may leave a folder it cannot enter
    std::filesystem::remove_all(dir_, ignored);
  }
  // A path in the folder, as text.
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

}  // namespace chakrashim::testing_support
