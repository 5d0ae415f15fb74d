// Unit tests for the capture scan (tools/common/capture_scan.h) on folders
// made in a temporary directory.
#include "common/capture_scan.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace chakrashim::tools {
namespace {

namespace fs = std::filesystem;

class CaptureScan : public testing_support::TempDirTest {
 protected:
  void touch(const fs::path& rel, const std::string& text = "{}") {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }
};

TEST(CaptureScanNames, ParsesFolderAndFileNames) {
  const auto f = parse_folder_name("77_kineto.2");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->job, "77");
  EXPECT_EQ(f->kind, FileKind::device);
  EXPECT_EQ(f->index, 2u);
  EXPECT_EQ(parse_folder_name("a_b_chakra")->job, "a_b");
  EXPECT_FALSE(parse_folder_name("0_other"));
  EXPECT_EQ(rank_from_file_name("rank-3.json.gz.partial"), 3u);
  EXPECT_EQ(rank_from_file_name("device.0.json.gz"), 0u);
  EXPECT_EQ(rank_from_file_name("kineto.json"), std::nullopt);
  EXPECT_TRUE(is_partial_name("rank-1.json.partial"));
  EXPECT_FALSE(is_partial_name("rank-1.json"));
}

TEST_F(CaptureScan, PairsRanksAcrossTheTwoFoldersOfEachRun) {
  touch("0_chakra/rank-0.json");
  touch("0_kineto/rank-0.json.gz");
  touch("0_kineto/rank-1.json");
  touch("0_chakra/rank-2.json.partial");
  touch("0_chakra.1/rank-0.json");
  touch("0_kineto.1/rank-0.json");
  touch("0_kineto/notes.txt");
  const auto scan = scan_directory(dir_.string());
  ASSERT_EQ(scan.groups.size(), 2u);
  const auto& g = scan.groups[0];
  EXPECT_EQ(g.label, "0");
  ASSERT_EQ(g.ranks.size(), 2u);
  EXPECT_TRUE(g.ranks[0].host_path && g.ranks[0].device_path);
  EXPECT_FALSE(g.ranks[1].host_path);
  ASSERT_EQ(g.partials.size(), 1u);
  EXPECT_EQ(g.partials[0].rank, 2u);
  EXPECT_EQ(g.unknown.size(), 1u);
  EXPECT_EQ(scan.groups[1].label, "0.1");
}

TEST_F(CaptureScan, OneFolderOfThePairFindsItsSibling) {
  touch("5_chakra.3/rank-0.json");
  touch("5_kineto.3/rank-0.json");
  const auto scan = scan_directory((dir_ / "5_kineto.3").string());
  ASSERT_EQ(scan.groups.size(), 1u);
  EXPECT_EQ(scan.groups[0].label, "5.3");
  ASSERT_EQ(scan.groups[0].ranks.size(), 1u);
  EXPECT_TRUE(scan.groups[0].ranks[0].host_path);
}

TEST_F(CaptureScan, LooseFilesAreSortedByContent) {
  touch("a/host.1.json", R"({"schema": "1.1.1-chakra.0.0.4", "pid": 1, "nodes": []})");
  touch("a/device.1.json", "{\n  \"schemaVersion\": 1, \"traceEvents\": []}");
  touch("a/kineto.json", R"({"traceEvents": []})");
  const auto g = group_files({(dir_ / "a/host.1.json").string(), (dir_ / "a/device.1.json").string(),
                              (dir_ / "a/kineto.json").string()});
  ASSERT_EQ(g.groups.size(), 1u);
  ASSERT_EQ(g.groups[0].ranks.size(), 2u);
  EXPECT_EQ(g.groups[0].ranks[0].rank, 0u);
  EXPECT_FALSE(g.groups[0].ranks[0].rank_from_name);
  EXPECT_TRUE(g.groups[0].ranks[1].host_path && g.groups[0].ranks[1].device_path);
  EXPECT_EQ(sniff_kind((dir_ / "a/kineto.json").string()), FileKind::device);
}

TEST_F(CaptureScan, AMissingFolderIsAnError) {
  EXPECT_FALSE(scan_directory((dir_ / "nope").string()).error.empty());
}

}  // namespace
}  // namespace chakrashim::tools

namespace chakrashim::tools {
namespace {

TEST_F(CaptureScan, WindowsOneLevelDownAreListedInStepOrder) {
  // Repeated windows (docs/on-demand.md): step-2, step-7, step-12, not the
  // order of the names' characters.
  for (const char* w : {"step-12", "step-2", "step-7", "step-100"}) touch(std::string(w) + "/0_kineto/rank-0.json");
  const auto below = capture_roots_below(dir_.string());
  ASSERT_EQ(below.size(), 4u);
  EXPECT_EQ(fs::path(below[0]).filename(), "step-2");
  EXPECT_EQ(fs::path(below[1]).filename(), "step-7");
  EXPECT_EQ(fs::path(below[2]).filename(), "step-12");
  EXPECT_EQ(fs::path(below[3]).filename(), "step-100");
  EXPECT_NE(nothing_found(dir_.string()).find("step-2, " + dir_.string() + "/step-7"), std::string::npos)
      << nothing_found(dir_.string());
}

}  // namespace
}  // namespace chakrashim::tools
