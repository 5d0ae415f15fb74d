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

#include "support/temp_dir.h"

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

// The index choose_layout gives `r` where only `existing` exist; nullopt
// for none.
std::optional<std::uint64_t> index_with(std::set<std::string> existing, const LayoutRequest& r = request(0)) {
  FakeFs fs;
  fs.paths = std::move(existing);
  const auto l = choose_layout(r, fs.exists());
  return l ? std::optional<std::uint64_t>(l->index) : std::nullopt;
}

// The layout of run `index` for `rank`: NeMo's folders of the job under
// `root`, ".N" after the first run, and the rank's plain JSON files in them.
void expect_layout(const std::optional<Layout>& l, unsigned index, std::uint64_t rank,
                   const std::string& root = "/traces", const std::string& job = "77") {
  ASSERT_TRUE(l.has_value());
  const std::string suffix = index ? "." + std::to_string(index) : "";
  const std::string file = "/rank-" + std::to_string(rank) + ".json";
  EXPECT_EQ(l->index, index);
  EXPECT_EQ(l->host_dir, root + "/" + job + "_chakra" + suffix);
  EXPECT_EQ(l->device_dir, root + "/" + job + "_kineto" + suffix);
  EXPECT_EQ(l->host_path, root + "/" + job + "_chakra" + suffix + file);
  EXPECT_EQ(l->device_path, root + "/" + job + "_kineto" + suffix + file);
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
  expect_layout(choose_layout(request(5), fs.exists()), 0, 5);
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
  expect_layout(choose_layout(request(0), fs.exists()), 1, 0);
}

TEST(ChooseLayout, AThirdRunGoesToIndexTwo) {
  FakeFs fs;
  fs.paths = {"/traces/77_chakra/rank-0.json", "/traces/77_kineto/rank-0.json",
              "/traces/77_chakra.1/rank-0.json", "/traces/77_kineto.1/rank-0.json"};
  expect_layout(choose_layout(request(0), fs.exists()), 2, 0);
}

TEST(ChooseLayout, AFileInEitherFolderAloneTakesTheIndex) {
  EXPECT_EQ(index_with({"/traces/77_chakra/rank-0.json"}), 1u);  // host only (device trace off)
  EXPECT_EQ(index_with({"/traces/77_kineto/rank-0.json"}), 1u);  // device only (host trace off)
}

TEST(ChooseLayout, ALeftoverPartialCountsAsTaken) {
  EXPECT_EQ(index_with({"/traces/77_chakra/rank-0.json.partial"}), 1u);
  EXPECT_EQ(index_with({"/traces/77_kineto/rank-0.json.partial"}), 1u);
  EXPECT_EQ(index_with({"/traces/77_kineto/rank-0.json.gz.partial"}), 1u);
}

TEST(ChooseLayout, AGzipDeviceFileCountsAsTakenForAPlainRunAndViceVersa) {
  {
    auto r = request(0);
    r.gzip = false;
    EXPECT_EQ(index_with({"/traces/77_kineto/rank-0.json.gz"}, r), 1u);
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
  EXPECT_EQ(index_with({"/traces/77_chakra/rank-1.json", "/traces/77_kineto/rank-1.json",
                        "/traces/78_chakra/rank-0.json", "/traces/77_kineto/rank-0.json.tmp",
                        "/traces/77_chakra/rank-00.json"}),
            0u);
}

TEST(ChooseLayout, RestartCountTwoStartsAtIndexTwo) {
  FakeFs fs;
  auto r = request(0);
  r.restart_count = 2;
  expect_layout(choose_layout(r, fs.exists()), 2, 0);
  // Indexes below the restart count are not even looked at.
  for (const auto& p : fs.asked) {
    EXPECT_EQ(p.find("/traces/77_chakra/"), std::string::npos) << p;
    EXPECT_EQ(p.find(".1/"), std::string::npos) << p;
  }
}

TEST(ChooseLayout, RestartCountSkipsPastTakenIndexes) {
  auto r = request(0);
  r.restart_count = 2;
  EXPECT_EQ(index_with({"/traces/77_chakra.2/rank-0.json", "/traces/77_kineto.3/rank-0.json.partial"}, r), 4u);
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
  // The existing file is seen under its single-slash name: run 1.
  expect_layout(choose_layout(r, fs.exists()), 1, 4);
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

TEST(ChooseLayout, AFolderNotOursPassesTheIndexOverAndSaysWhy) {
  // Issue #48: a link where 77_kineto belongs (a group member's), and a
  // folder of another user where 77_chakra.1 belongs: index 2, with both
  // said; the same for every rank, and with overwrite too.
  const auto refused = [](const std::string& dir) -> std::string {
    if (dir == "/traces/77_kineto") return "is a symbolic link (not followed)";
    if (dir == "/traces/77_chakra.1") return "belongs to uid 7";
    return {};
  };
  const auto nothing = [](const std::string&) { return false; };
  for (bool overwrite : {false, true}) {
    LayoutRequest r = request(3);
    r.overwrite = overwrite;
    const auto l = choose_layout(r, nothing, refused);
    ASSERT_TRUE(l.has_value());
    EXPECT_EQ(l->index, 2u);
    EXPECT_EQ(l->passed_over, "/traces/77_kineto is a symbolic link (not followed); /traces/77_chakra.1 belongs to uid 7");
  }
  EXPECT_EQ(choose_layout(request(3), nothing)->passed_over, "");
}

// --- with a real folder ---------------------------------------------------

class ChooseLayoutOnDisk : public testing_support::TempDirTest {
 protected:
  void make_dir(const std::string& path) { ASSERT_EQ(::mkdir(path.c_str(), 0777), 0) << path; }
  void touch(const std::string& path) { std::ofstream(path) << "{}"; }
};

TEST_F(ChooseLayoutOnDisk, RealFilesPushTheRunToTheNextSiblingFolder) {
  const auto exists = [](const std::string& p) {
    struct stat st;
    return ::access(p.c_str(), F_OK) == 0 && ::stat(p.c_str(), &st) == 0;
  };
  LayoutRequest r;
  r.root = dir_.string();
  r.job_id = "0";
  r.rank = 2;

  auto l = choose_layout(r, exists);
  ASSERT_TRUE(l.has_value());
  expect_layout(l, 0, 2, r.root, "0");

  // Empty folders, as an armed rank that has not written yet leaves, do not
  // take the index.
  make_dir(l->host_dir);
  make_dir(l->device_dir);
  EXPECT_EQ(choose_layout(r, exists)->index, 0u);

  touch(l->device_path + ".partial");
  l = choose_layout(r, exists);
  ASSERT_TRUE(l.has_value());
  expect_layout(l, 1, 2, r.root, "0");

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
