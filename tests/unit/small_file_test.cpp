// Unit tests for the small control files' reads and replacing writes
// (files/small_file.h), in a temporary folder.
#include "files/small_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "test_temp_dir.h"

namespace chakrashim::files {
namespace {

namespace fs = std::filesystem;

class SmallFile : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing_support::make_test_dir("chakra-small"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(SmallFile, ReplacesWholeAndLeavesNoTemporaryName) {
  std::string error;
  ASSERT_TRUE(replace_file(dir_.string(), "step.json", "one\n", false, error)) << error;
  ASSERT_TRUE(replace_file(dir_.string(), "step.json", "two\n", true, error)) << error;
  EXPECT_EQ(read_small_file((dir_ / "step.json").string(), 100, error), std::optional<std::string>("two\n"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(SmallFile, AFailedWriteSaysWhereAndRemovesTheTemporaryFile) {
  std::string error;
  EXPECT_FALSE(replace_file((dir_ / "absent").string(), "x.json", "text", false, error));
  EXPECT_EQ(error.rfind("cannot create " + (dir_ / "absent" / ".x.json.tmp").string() + ": ", 0), 0u) << error;
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(SmallFile, ReadsUpToTheCapAndTellsAMissingFileApart) {
  std::ofstream(dir_ / "big") << std::string(101, 'x');
  std::string error;
  int open_errno = -1;
  EXPECT_FALSE(read_small_file((dir_ / "big").string(), 100, error, &open_errno));
  EXPECT_EQ(error, "larger than 100 bytes");
  EXPECT_EQ(open_errno, 0);
  EXPECT_TRUE(read_small_file((dir_ / "big").string(), 101, error));
  EXPECT_FALSE(read_small_file((dir_ / "none").string(), 100, error, &open_errno));
  EXPECT_EQ(open_errno, ENOENT);
}

}  // namespace
}  // namespace chakrashim::files
