// Unit tests for HtaRankScan (tools/common/hta_rank_scan.h): the same first
// match as HTA's Python regex "rank":\s+(\d+), fed in arbitrary chunks.
#include "common/hta_rank_scan.h"

#include <gtest/gtest.h>

#include <string>

namespace chakrashim::tools {
namespace {

std::optional<std::uint64_t> scan(const std::string& text, std::size_t chunk = 0) {
  HtaRankScan s;
  if (chunk == 0) chunk = text.size() + 1;
  for (std::size_t i = 0; i < text.size(); i += chunk) s.feed(std::string_view(text).substr(i, chunk));
  s.finish();
  return s.rank();
}

TEST(HtaRankScan, ReadsTheRankWrittenWithASpace) {
  EXPECT_EQ(scan(R"({"distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8}})"), 3u);
}

TEST(HtaRankScan, FindsNothingInACompactRank) { EXPECT_EQ(scan(R"({"rank":3})"), std::nullopt); }

TEST(HtaRankScan, TakesTheFirstMatchOnly) {
  EXPECT_EQ(scan(R"({"rank":0, "x": {"rank": 5}, "y": {"rank": 6}})"), 5u);
}

TEST(HtaRankScan, AcceptsAnyWhitespaceRun) { EXPECT_EQ(scan("{\"rank\":\n\t  12}"), 12u); }

TEST(HtaRankScan, NeedsDigitsAfterTheSpace) {
  EXPECT_EQ(scan(R"({"rank": "3", "other": 1, "rank": 4})"), 4u);
}

TEST(HtaRankScan, GivesTheSameAnswerForEveryChunkSize) {
  const std::string text = R"({"a": "\"rank\"", "b": ""rank": 1", "distributedInfo": {"rank": 417}})";
  for (std::size_t chunk = 1; chunk < 12; ++chunk) EXPECT_EQ(scan(text, chunk), 1u) << chunk;
}

TEST(HtaRankScan, CompletesDigitsRunningToTheEnd) {
  HtaRankScan s;
  s.feed(R"("rank": 2)");
  EXPECT_FALSE(s.done());
  s.feed("9");
  s.finish();
  EXPECT_EQ(s.rank(), 29u);
}

TEST(HtaRankScan, RecordsWhereTheMatchStarts) {
  HtaRankScan s;
  s.feed(R"(xx"ran "rank": 7,)");
  EXPECT_EQ(s.rank(), 7u);
  EXPECT_EQ(s.offset(), 7u);
}

}  // namespace
}  // namespace chakrashim::tools
