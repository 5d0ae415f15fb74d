// Unit tests for output naming (files/output_paths.h) against docs/design.md
// section 1: NeMo's JOB_chakra/ and JOB_kineto/ folders, new sibling folders
// .1, .2, ... for a later run, and the .partial name of a file being written.
#include "files/output_paths.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace chakrashim::files {
namespace {

// A fake file system: the set of paths that exist. It also records every
// path it was asked about.
struct FakeFs {
  std::set<std::string> paths;
  mutable std::vector<std::string> asked;

  std::function<bool(const std::string&)> exists() const {
    return [this](const std::string& p) {
      asked.push_back(p);
      return paths.count(p) > 0;
    };
  }
};

LayoutRequest request(std::uint64_t rank = 0) {
  LayoutRequest r;
  r.root = "/traces";
  r.job_id = "77";
  r.rank = rank;
  return r;
}

// --- names --------------------------------------------------------------

TEST(OutputPaths, FolderNamesFollowNemoWithoutAnIndexForTheFirstRun) {
  EXPECT_EQ(folder_name("123", TraceKind::host, 0), "123_chakra");
  EXPECT_EQ(folder_name("123", TraceKind::device, 0), "123_kineto");
  EXPECT_EQ(folder_name("0", TraceKind::device, 2), "0_kineto.2");
  EXPECT_EQ(folder_name("0", TraceKind::host, 1), "0_chakra.1");
  EXPECT_EQ(folder_name("job-7", TraceKind::host, 10), "job-7_chakra.10");
}

TEST(OutputPaths, RankFileNamesArePlainJsonOrGzip) {
  EXPECT_EQ(rank_file_name(3, false), "rank-3.json");
  EXPECT_EQ(rank_file_name(3, true), "rank-3.json.gz");
  EXPECT_EQ(rank_file_name(0, false), "rank-0.json");
  EXPECT_EQ(rank_file_name(18446744073709551615ULL, false), "rank-18446744073709551615.json");
}

TEST(OutputPaths, PartialPathAppendsDotPartial) {
  EXPECT_EQ(partial_path("/t/0_chakra/rank-0.json"), "/t/0_chakra/rank-0.json.partial");
  EXPECT_EQ(partial_path("/t/0_kineto/rank-1.json.gz"), "/t/0_kineto/rank-1.json.gz.partial");
}

// --- choose_layout --------------------------------------------------------

TEST(ChooseLayout, TheFirstRunGetsIndexZeroAndNemoFolders) {
  FakeFs fs;
  const auto l = choose_layout(request(5), fs.exists());
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->index, 0u);
  EXPECT_EQ(l->host_dir, "/traces/77_chakra");
  EXPECT_EQ(l->device_dir, "/traces/77_kineto");
  EXPECT_EQ(l->host_path, "/traces/77_chakra/rank-5.json");
  EXPECT_EQ(l->device_path, "/traces/77_kineto/rank-5.json");
}

TEST(ChooseLayout, ItAsksOnlyAboutFilesOfThisRankNeverAboutFolders) {
  FakeFs fs;
  ASSERT_TRUE(choose_layout(request(5), fs.exists()).has_value());
  ASSERT_FALSE(fs.asked.empty());
  for (const auto& p : fs.asked) {
    EXPECT_NE(p.find("/rank-5.json"), std::string::npos) << p;
    EXPECT_NE(p, "/traces/77_chakra");
    EXPECT_NE(p, "/traces/77_kineto");
  }
}

TEST(ChooseLayout, ASecondRunGoesToNewSiblingFolders) {
  FakeFs fs;
  fs.paths = {"/traces/77_chakra/rank-0.json", "/traces/77_kineto/rank-0.json"};
  const auto l = choose_layout(request(0), fs.exists());
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->index, 1u);
  EXPECT_EQ(l->host_dir, "/traces/77_chakra.1");
  EXPECT_EQ(l->device_dir, "/traces/77_kineto.1");
  EXPECT_EQ(l->host_path, "/traces/77_chakra.1/rank-0.json");
  EXPECT_EQ(l->device_path, "/traces/77_kineto.1/rank-0.json");
}

TEST(ChooseLayout, AThirdRunGoesToIndexTwo) {
  FakeFs fs;
  fs.paths = {"/traces/77_chakra/rank-0.json", "/traces/77_kineto/rank-0.json",
              "/traces/77_chakra.1/rank-0.json", "/traces/77_kineto.1/rank-0.json"};
  const auto l = choose_layout(request(0), fs.exists());
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->index, 2u);
  EXPECT_EQ(l->host_dir, "/traces/77_chakra.2");
  EXPECT_EQ(l->device_dir, "/traces/77_kineto.2");
}

TEST(ChooseLayout, AFileInEitherFolderAloneTakesTheIndex) {
  {
    FakeFs fs;
    fs.paths = {"/traces/77_chakra/rank-0.json"};  // host only (device trace off)
    EXPECT_EQ(choose_layout(request(0), fs.exists())->index, 1u);
  }
  {
    FakeFs fs;
    fs.paths = {"/traces/77_kineto/rank-0.json"};  // device only (host trace off)
    EXPECT_EQ(choose_layout(request(0), fs.exists())->index, 1u);
  }
}

TEST(ChooseLayout, ALeftoverPartialCountsAsTaken) {
  {
    FakeFs fs;
    fs.paths = {"/traces/77_chakra/rank-0.json.partial"};
    EXPECT_EQ(choose_layout(request(0), fs.exists())->index, 1u);
  }
  {
    FakeFs fs;
    fs.paths = {"/traces/77_kineto/rank-0.json.partial"};
    EXPECT_EQ(choose_layout(request(0), fs.exists())->index, 1u);
  }
  {
    FakeFs fs;
    fs.paths = {"/traces/77_kineto/rank-0.json.gz.partial"};
    EXPECT_EQ(choose_layout(request(0), fs.exists())->index, 1u);
  }
}

TEST(ChooseLayout, AGzipDeviceFileCountsAsTakenForAPlainRunAndViceVersa) {
  {
    FakeFs fs;
    fs.paths = {"/traces/77_kineto/rank-0.json.gz"};
    auto r = request(0);
    r.gzip = false;
    EXPECT_EQ(choose_layout(r, fs.exists())->index, 1u);
  }
  {
    FakeFs fs;
    fs.paths = {"/traces/77_kineto/rank-0.json"};
    auto r = request(0);
    r.gzip = true;
    const auto l = choose_layout(r, fs.exists());
    ASSERT_TRUE(l.has_value());
    EXPECT_EQ(l->index, 1u);
    EXPECT_EQ(l->device_path, "/traces/77_kineto.1/rank-0.json.gz");
    // The host ET stays plain JSON even with gzip.
    EXPECT_EQ(l->host_path, "/traces/77_chakra.1/rank-0.json");
  }
}

TEST(ChooseLayout, OtherRanksFilesAndOtherJobsDoNotTakeTheIndex) {
  FakeFs fs;
  fs.paths = {"/traces/77_chakra/rank-1.json", "/traces/77_kineto/rank-1.json",
              "/traces/78_chakra/rank-0.json", "/traces/77_kineto/rank-0.json.tmp",
              "/traces/77_chakra/rank-00.json"};
  const auto l = choose_layout(request(0), fs.exists());
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->index, 0u);
}

TEST(ChooseLayout, RestartCountTwoStartsAtIndexTwo) {
  FakeFs fs;
  auto r = request(0);
  r.restart_count = 2;
  const auto l = choose_layout(r, fs.exists());
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->index, 2u);
  EXPECT_EQ(l->host_dir, "/traces/77_chakra.2");
  EXPECT_EQ(l->device_dir, "/traces/77_kineto.2");
  // Indexes below the restart count are not even looked at.
  for (const auto& p : fs.asked) {
    EXPECT_EQ(p.find("/traces/77_chakra/"), std::string::npos) << p;
    EXPECT_EQ(p.find(".1/"), std::string::npos) << p;
  }
}

TEST(ChooseLayout, RestartCountSkipsPastTakenIndexes) {
  FakeFs fs;
  fs.paths = {"/traces/77_chakra.2/rank-0.json", "/traces/77_kineto.3/rank-0.json.partial"};
  auto r = request(0);
  r.restart_count = 2;
  EXPECT_EQ(choose_layout(r, fs.exists())->index, 4u);
}

TEST(ChooseLayout, OverwriteReturnsTheRestartIndexEvenIfTaken) {
  FakeFs fs;
  fs.paths = {"/traces/77_chakra/rank-0.json", "/traces/77_kineto/rank-0.json",
              "/traces/77_chakra.2/rank-0.json", "/traces/77_kineto.2/rank-0.json"};
  auto r = request(0);
  r.overwrite = true;
  {
    const auto l = choose_layout(r, fs.exists());
    ASSERT_TRUE(l.has_value());
    EXPECT_EQ(l->index, 0u);
    EXPECT_EQ(l->host_path, "/traces/77_chakra/rank-0.json");
  }
  r.restart_count = 2;
  {
    const auto l = choose_layout(r, fs.exists());
    ASSERT_TRUE(l.has_value());
    EXPECT_EQ(l->index, 2u);
    EXPECT_EQ(l->device_path, "/traces/77_kineto.2/rank-0.json");
  }
}

TEST(ChooseLayout, ATrailingSlashInTheRootGivesNoDoubleSlash) {
  FakeFs fs;
  auto r = request(4);
  r.root = "/traces/";
  fs.paths = {"/traces/77_chakra/rank-4.json"};
  const auto l = choose_layout(r, fs.exists());
  ASSERT_TRUE(l.has_value());
  // The existing file is seen under its single-slash name.
  EXPECT_EQ(l->index, 1u);
  EXPECT_EQ(l->host_dir, "/traces/77_chakra.1");
  EXPECT_EQ(l->device_dir, "/traces/77_kineto.1");
  EXPECT_EQ(l->host_path, "/traces/77_chakra.1/rank-4.json");
  for (const auto& p : fs.asked) EXPECT_EQ(p.find("//"), std::string::npos) << p;
}

TEST(ChooseLayout, TwoRanksOfTheSameSecondRunGetTheSameIndex) {
  // The first run wrote ranks 0 and 1. In the second run rank 0 has already
  // published into .1 when rank 1 decides: rank 1 must still pick .1.
  FakeFs fs;
  fs.paths = {"/traces/77_chakra/rank-0.json",   "/traces/77_kineto/rank-0.json",
              "/traces/77_chakra/rank-1.json",   "/traces/77_kineto/rank-1.json",
              "/traces/77_chakra.1/rank-0.json", "/traces/77_kineto.1/rank-0.json.partial"};
  const auto l1 = choose_layout(request(1), fs.exists());
  ASSERT_TRUE(l1.has_value());
  EXPECT_EQ(l1->index, 1u);

  // And the other way round: rank 1 decided first.
  FakeFs fs2;
  fs2.paths = {"/traces/77_chakra/rank-0.json", "/traces/77_kineto/rank-0.json",
               "/traces/77_chakra/rank-1.json", "/traces/77_kineto/rank-1.json",
               "/traces/77_chakra.1/rank-1.json.partial"};
  const auto l0 = choose_layout(request(0), fs2.exists());
  ASSERT_TRUE(l0.has_value());
  EXPECT_EQ(l0->index, 1u);
  EXPECT_EQ(l0->host_dir, l1->host_dir);
  EXPECT_EQ(l0->device_dir, l1->device_dir);
}

TEST(ChooseLayout, GivesUpWhenEveryIndexIsTaken) {
  unsigned calls = 0;
  const auto everything_exists = [&calls](const std::string&) {
    ++calls;
    return true;
  };
  EXPECT_FALSE(choose_layout(request(0), everything_exists).has_value());
  EXPECT_GT(calls, 0u);
}

// --- with a real folder ---------------------------------------------------

class ChooseLayoutOnDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/chakrashim_paths_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    if (root_.empty()) return;
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) std::remove(it->c_str());
    ::rmdir(root_.c_str());
  }
  void make_dir(const std::string& path) {
    ASSERT_EQ(::mkdir(path.c_str(), 0777), 0) << path;
    created_.push_back(path);
  }
  void touch(const std::string& path) {
    std::ofstream(path) << "{}";
    created_.push_back(path);
  }

  std::string root_;
  std::vector<std::string> created_;
};

TEST_F(ChooseLayoutOnDisk, RealFilesPushTheRunToTheNextSiblingFolder) {
  const auto exists = [](const std::string& p) {
    struct stat st;
    return ::access(p.c_str(), F_OK) == 0 && ::stat(p.c_str(), &st) == 0;
  };
  LayoutRequest r;
  r.root = root_;
  r.job_id = "0";
  r.rank = 2;

  auto l = choose_layout(r, exists);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->index, 0u);
  EXPECT_EQ(l->host_dir, root_ + "/0_chakra");
  EXPECT_EQ(l->device_dir, root_ + "/0_kineto");

  // Empty folders, as an armed rank that has not written yet leaves, do not
  // take the index.
  make_dir(l->host_dir);
  make_dir(l->device_dir);
  EXPECT_EQ(choose_layout(r, exists)->index, 0u);

  touch(l->device_path + ".partial");
  l = choose_layout(r, exists);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->index, 1u);
  EXPECT_EQ(l->host_path, root_ + "/0_chakra.1/rank-2.json");
  EXPECT_EQ(l->device_path, root_ + "/0_kineto.1/rank-2.json");

  make_dir(l->host_dir);
  touch(l->host_path);
  l = choose_layout(r, exists);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->index, 2u);

  // Another rank of the same folders is unaffected.
  r.rank = 3;
  EXPECT_EQ(choose_layout(r, exists)->index, 0u);
}

}  // namespace
}  // namespace chakrashim::files
