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

// Issue #38: link, convert and report took only a run's folders; a trace
// root of repeated or on-demand windows (ROOT/step-S/JOB_chakra) gave them
// "no rank has both...". scan_capture takes it, window by window.
TEST_F(CaptureScan, ARootOfWindowsIsScannedWindowByWindowInStepOrder) {
  for (const char* w : {"step-12", "step-2"}) {
    touch(std::string(w) + "/0_chakra/rank-0.json");
    touch(std::string(w) + "/0_kineto/rank-0.json");
  }
  touch("step-2/0_chakra.1/rank-0.json");
  touch("step-2/0_kineto.1/rank-0.json");
  fs::create_directories(dir_ / ".chakrashim" / "0");  // the on-demand control folder is no window
  EXPECT_EQ(window_folders(dir_.string()),
            (std::vector<std::string>{(dir_ / "step-2").string(), (dir_ / "step-12").string()}));
  const auto scan = scan_capture(dir_.string());
  ASSERT_EQ(scan.groups.size(), 3u);
  EXPECT_EQ(scan.groups[0].label, "step-2/0");
  EXPECT_EQ(scan.groups[1].label, "step-2/0.1");
  EXPECT_EQ(scan.groups[2].label, "step-12/0");
  ASSERT_EQ(scan.groups[2].ranks.size(), 1u);
  EXPECT_TRUE(scan.groups[2].ranks[0].host_path && scan.groups[2].ranks[0].device_path);
  // A run's own folders are scanned as before.
  EXPECT_EQ(scan_capture((dir_ / "step-2").string()).groups[0].label, "0");
  EXPECT_TRUE(window_folders((dir_ / "step-2").string()).empty());
}

// Issue #38: check on a parent folder said only "check the path"; it now
// says what it found there and what it expected, windows' roots included.
TEST_F(CaptureScan, NothingFoundSaysWhatTheFolderHoldsAndWhatWasExpected) {
  touch("notes.txt", "x");
  fs::create_directories(dir_ / "empty");
  const std::string bare = nothing_found(dir_.string());
  EXPECT_NE(bare.find("it holds 1 folder (empty/) and 1 file (notes.txt)"), std::string::npos) << bare;
  EXPECT_NE(bare.find("expected JOB_chakra/ and JOB_kineto/ folders"), std::string::npos) << bare;
  touch("every/step-3/0_chakra/rank-0.json");
  touch("every/step-3/0_kineto/rank-0.json");
  touch("fixed/0_chakra/rank-0.json");
  const std::string found = nothing_found(dir_.string());
  EXPECT_NE(found.find("captures one level down: " + (dir_ / "fixed").string()), std::string::npos) << found;
  EXPECT_NE(found.find("windows of repeated or on-demand captures in " + (dir_ / "every").string()),
            std::string::npos)
      << found;
}

TEST_F(CaptureScan, AFileOfNeitherKindIsDescribedForWhatItIs) {
  touch("rank.0.et", std::string("\x0a\x05\x31\x2e\x31", 5));
  touch("notes.txt", "hello");
  touch("other.json", "{\"x\": 1}");
  touch("empty.json", "");
  EXPECT_NE(describe_unknown_file((dir_ / "rank.0.et").string()).find("Chakra protobuf trace"), std::string::npos);
  EXPECT_EQ(describe_unknown_file((dir_ / "notes.txt").string()), "is not JSON, so neither an ET nor a device trace");
  EXPECT_NE(describe_unknown_file((dir_ / "other.json").string()).find("is JSON, but neither"), std::string::npos);
  EXPECT_EQ(describe_unknown_file((dir_ / "empty.json").string()), "is empty");
}

}  // namespace
}  // namespace chakrashim::tools
