// Unit tests for the on-demand control folder's opening (files/control_dir.h):
// what a user who can write the trace folder may have put there beforehand.
#include "files/control_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace chakrashim::files {
namespace {

namespace fs = std::filesystem;

class ControlDirOpen : public testing_support::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    fs::permissions(dir_, fs::perms(0755));
  }
  fs::path base() const { return dir_ / ".chakrashim"; }
};

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

TEST_F(ControlDirOpen, MakesAPrivateFolderOnceAndSaysItMadeIt) {
  std::string error;
  auto made = open_control_dir(dir_.string(), "42", /*create=*/true, error);
  ASSERT_TRUE(made) << error;
  EXPECT_TRUE(made.created);
  EXPECT_EQ(made.name, "42");
  EXPECT_EQ(made.path, (base() / "42").string());
  EXPECT_EQ(mode_of(base() / "42"), 0700u);
  auto again = open_control_dir(dir_.string(), "42", /*create=*/true, error);
  ASSERT_TRUE(again) << error;
  EXPECT_FALSE(again.created);
  // A reader that may not create waits for it.
  EXPECT_FALSE(open_control_dir(dir_.string(), "43", /*create=*/false, error));
  EXPECT_EQ(error, "not there yet");
  EXPECT_FALSE(fs::exists(base() / "43"));
}

TEST_F(ControlDirOpen, KeepsTheGroupOfASharedTraceFolderAndMakesTheBaseSticky) {
  fs::permissions(dir_, fs::perms(02775));
  std::string error;
  ASSERT_TRUE(open_control_dir(dir_.string(), "42", true, error)) << error;
  EXPECT_EQ(mode_of(base()), 03775u);
  EXPECT_EQ(mode_of(base() / "42"), 02770u);
}

TEST_F(ControlDirOpen, ReplacesALinkAtTheJobFolderAndLeavesItsTargetAlone) {
  // A symlinked .chakrashim/JOB once made the exit remove files in the
  // folder it pointed to (issue #34 item 5).
  fs::create_directories(dir_ / "elsewhere");
  std::ofstream(dir_ / "elsewhere" / "step.json") << "theirs";
  fs::create_directories(base());
  fs::create_directory_symlink(dir_ / "elsewhere", base() / "42");
  std::string error;
  auto opened = open_control_dir(dir_.string(), "42", true, error);
  ASSERT_TRUE(opened) << error;
  EXPECT_TRUE(opened.created);
  EXPECT_NE(opened.note.find("symbolic link"), std::string::npos) << opened.note;
  EXPECT_FALSE(fs::is_symlink(base() / "42"));
  EXPECT_TRUE(fs::is_directory(base() / "42"));
  EXPECT_TRUE(fs::exists(dir_ / "elsewhere" / "step.json"));
  remove_control_dir(opened);
  EXPECT_FALSE(fs::exists(base()));
  EXPECT_TRUE(fs::exists(dir_ / "elsewhere" / "step.json"));
}

TEST_F(ControlDirOpen, RefusesALinkedBaseFolder) {
  fs::create_directories(dir_ / "elsewhere");
  fs::create_directory_symlink(dir_ / "elsewhere", base());
  std::string error;
  EXPECT_FALSE(open_control_dir(dir_.string(), "42", true, error));
  EXPECT_NE(error.find("is a symbolic link (not followed)"), std::string::npos) << error;
  EXPECT_TRUE(fs::is_empty(dir_ / "elsewhere"));
}

TEST_F(ControlDirOpen, PassesOverAFolderAnotherUserOwnsForOneOfItsOwn) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a folder to another user needs root";
  fs::create_directories(base() / "42");
  ASSERT_EQ(::chown((base() / "42").c_str(), 65534, 65534), 0);
  std::string error;
  auto opened = open_control_dir(dir_.string(), "42", true, error);
  ASSERT_TRUE(opened) << error;
  EXPECT_EQ(opened.name, "42.uid0");
  EXPECT_NE(opened.note.find("belongs to uid 65534"), std::string::npos) << opened.note;
  // A reader finds the job's own folder too.
  auto read = open_control_dir(dir_.string(), "42", false, error);
  ASSERT_TRUE(read) << error;
  EXPECT_EQ(read.name, "42.uid0");
}

TEST_F(ControlDirOpen, KnowsWhenItsFolderWentAwayAndRemovesOnlyItsOwn) {
  std::string error;
  auto opened = open_control_dir(dir_.string(), "42", true, error);
  ASSERT_TRUE(opened) << error;
  EXPECT_TRUE(control_dir_intact(opened));
  fs::rename(base() / "42", base() / "moved");
  fs::create_directories(base() / "42");  // someone else's, by the same name
  EXPECT_FALSE(control_dir_intact(opened));
  remove_control_dir(opened);
  EXPECT_TRUE(fs::exists(base() / "42"));
  EXPECT_TRUE(fs::exists(base() / "moved"));
  fs::remove(base() / "42");
  fs::remove(base() / "moved");
  EXPECT_FALSE(control_dir_intact(opened));
}

}  // namespace
}  // namespace chakrashim::files
