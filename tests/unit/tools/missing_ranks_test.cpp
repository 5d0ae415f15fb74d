// Unit tests for the missing-rank line of link, convert and report
// (tools/common/missing_ranks.h), issue #38: with world size 2 and one
// rank's files gone, those commands ran without a word.
#include "common/missing_ranks.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/temp_dir.h"

namespace chakrashim::tools {
namespace {

constexpr const char* kTail =
    "{\"ph\": \"X\", \"name\": \"aten::add\"}\n],\n\"traceName\": \"x\",\n"
    "\"chakrashim\": {\"version\": \"0.1.0\", \"steps\": {\"start\": 2}, "
    "\"ranks\": {\"filter\": %s, \"world_size\": %s}, \"host_trace\": \"on\"}\n}\n";

std::string tail_with(const std::string& filter, const std::string& world) {
  char text[512];
  std::snprintf(text, sizeof text, kTail, filter.c_str(), world.c_str());
  return text;
}

TEST(MissingRanks, ReadsTheWorldSizeAndFilterFromTheMetadataAtTheEnd) {
  const auto e = expectation_from_tail(tail_with("\"0,2\"", "4"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->world_size, 4u);
  EXPECT_EQ(e->filter, "0,2");
  const auto none = expectation_from_tail(tail_with("null", "null"));
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->world_size);
  EXPECT_FALSE(none->filter);
  EXPECT_FALSE(expectation_from_tail("{\"traceEvents\": []}\n"));  // torch.profiler's: no metadata
}

TEST(MissingRanks, NamesTheRanksTheFilterLetsThroughThatHaveNoFiles) {
  CaptureGroup g;
  g.label = "0";
  g.ranks.push_back(RankFiles{0, true, "a", "b"});
  g.ranks.push_back(RankFiles{2, true, "a", "b"});
  EXPECT_EQ(missing_ranks(g, {4, std::nullopt}), (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(missing_ranks(g, {4, "0,2"}), (std::vector<std::uint64_t>{}));
  EXPECT_EQ(missing_ranks(g, {4, "0-2"}), (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(missing_ranks(g, {std::nullopt, std::nullopt}), (std::vector<std::uint64_t>{}));
}

class MissingRanksLine : public testing_support::TempDirTest {};

TEST_F(MissingRanksLine, SaysWhichRankOfTheWorldHasNoFilesAndWhichAreThere) {
  const auto device = (dir_ / "rank-0.json").string();
  std::ofstream(device) << "{\"traceEvents\": [\n" << tail_with("null", "2");
  CaptureGroup g;
  g.label = "0";
  g.ranks.push_back(RankFiles{0, true, "et", device});
  EXPECT_EQ(missing_ranks_line(g),
            "run 0: rank 1 of world size 2 has no files (only rank 0 is there); `chakrashim check` says more");
  g.ranks.push_back(RankFiles{1, true, "et", device});
  EXPECT_EQ(missing_ranks_line(g), "");
}

}  // namespace
}  // namespace chakrashim::tools
