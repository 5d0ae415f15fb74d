// Unit tests for the small control files' reads and replacing writes
// (files/small_file.h), in a temporary folder.
#include "files/small_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace chakrashim::files {
namespace {

namespace fs = std::filesystem;

using SmallFile = testing_support::TempDirTest;

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
  EXPECT_EQ(error.rfind("cannot open " + (dir_ / "absent").string() + ": ", 0), 0u) << error;
  EXPECT_TRUE(fs::is_empty(dir_));
  // The rename fails (a folder holds the name): the temporary file goes.
  fs::create_directories(dir_ / "x.json" / "inside");
  EXPECT_FALSE(replace_file(dir_.string(), "x.json", "text", false, error));
  EXPECT_EQ(error.rfind("cannot rename " + dir_.string() + "/.x.json.", 0), 0u) << error;
  EXPECT_NE(error.find(".tmp to " + dir_.string() + "/x.json: "), std::string::npos) << error;
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(SmallFile, TemporaryNamesCannotBePredicted) {
  const std::string a = temporary_name("step.json"), b = temporary_name("step.json");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind(".step.json.", 0), 0u) << a;
  EXPECT_EQ(a.size(), std::string(".step.json.").size() + 16 + 4) << a;
}

TEST_F(SmallFile, NeverWritesThroughALinkAtTheNameOrTheOldTemporaryName) {
  // A file of the job's user that a planted link points at (issue #34 item
  // 5: a root-owned file was replaced by step JSON through .step.json.tmp).
  const fs::path victim = dir_ / "victim";
  std::ofstream(victim) << "precious";
  fs::create_directory(dir_ / "control");
  fs::create_symlink(victim, dir_ / "control" / ".step.json.tmp");
  fs::create_symlink(victim, dir_ / "control" / "step.json");
  std::string error;
  ASSERT_TRUE(replace_file((dir_ / "control").string(), "step.json", "note\n", false, error)) << error;
  std::string text;
  std::getline(std::ifstream(victim), text);
  EXPECT_EQ(text, "precious");
  EXPECT_FALSE(fs::is_symlink(dir_ / "control" / "step.json"));
  EXPECT_EQ(read_small_file((dir_ / "control" / "step.json").string(), 100, error),
            std::optional<std::string>("note\n"));
}

TEST_F(SmallFile, ReadsNeitherALinkNorAFifoNorADeviceAndNeverBlocks) {
  std::ofstream(dir_ / "file") << "x";
  fs::create_symlink(dir_ / "file", dir_ / "link");
  fs::create_symlink("/proc/self/fd/0", dir_ / "stdin");
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  std::string error;
  int open_errno = -1;
  EXPECT_FALSE(read_small_file((dir_ / "link").string(), 100, error, &open_errno));
  EXPECT_EQ(error, "a symbolic link (not followed)");
  EXPECT_EQ(open_errno, ELOOP);
  EXPECT_FALSE(read_small_file((dir_ / "stdin").string(), 100, error));
  EXPECT_EQ(error, "a symbolic link (not followed)");
  // A FIFO without a writer would block a plain open() for ever.
  EXPECT_FALSE(read_small_file((dir_ / "fifo").string(), 100, error, &open_errno));
  EXPECT_EQ(error, "not a regular file");
  EXPECT_EQ(open_errno, 0);
  EXPECT_FALSE(read_small_file("/dev/zero", 100, error));
  EXPECT_EQ(error, "not a regular file");
}

TEST_F(SmallFile, ListsTheNamesOfAnOpenFolderAgainAndAgain) {
  std::ofstream(dir_ / "a") << "";
  std::ofstream(dir_ / "b") << "";
  const int fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  std::string error;
  for (int i = 0; i < 2; ++i) {
    auto names = list_names_at(fd, error);
    ASSERT_TRUE(names) << error;
    std::sort(names->begin(), names->end());
    EXPECT_EQ(*names, (std::vector<std::string>{"a", "b"}));
  }
  ::close(fd);
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
