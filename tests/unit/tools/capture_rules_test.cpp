// Unit tests for the capture-wide rules (tools/check/capture_rules.h).
#include "check/capture_rules.h"
#include "common/missing_ranks.h"

#include <gtest/gtest.h>

namespace chakrashim::tools::check {
namespace {

RankReport report(std::uint64_t rank, std::optional<CaptureMeta> meta) {
  RankReport r;
  r.group = "0";
  r.rank = rank;
  r.meta = std::move(meta);
  return r;
}

CaptureGroup group_with(std::vector<std::uint64_t> ranks) {
  CaptureGroup g;
  g.label = "0";
  for (auto r : ranks) g.ranks.push_back({r, true, "/t/0_chakra/rank-" + std::to_string(r) + ".json",
                                          "/t/0_kineto/rank-" + std::to_string(r) + ".json"});
  return g;
}

TEST(CaptureRules, MissingRanksAreErrorsAndFilteredOnesOneWarning) {
  CaptureMeta meta;
  meta.world_size = 6;
  meta.ranks_filter = "0,2-3";
  std::vector<RankReport> reports = {report(0, meta), report(2, meta)};
  capture_rules(group_with({0, 2}), "/t", reports);
  // rank 3 is in the filter but absent: an error; 1, 4, 5 are filtered out.
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(reports[2].rank, 3u);
  ASSERT_EQ(reports[2].findings.size(), 1u);
  EXPECT_EQ(reports[2].findings[0].rule, RuleId::ranks_missing);
  EXPECT_FALSE(reports[3].rank);
  ASSERT_EQ(reports[3].findings.size(), 1u);
  EXPECT_EQ(reports[3].findings[0].rule, RuleId::ranks_filtered);
  EXPECT_NE(reports[3].findings[0].detail.find("ranks 1,4-5 "), std::string::npos);
}

TEST(CaptureRules, PartialsAndUnpairedFilesNameTheirRank) {
  auto g = group_with({0, 1});
  g.ranks[1].host_path.reset();
  g.partials.push_back({1, "/t/0_chakra/rank-1.json.partial"});
  std::vector<RankReport> reports = {report(0, std::nullopt), report(1, std::nullopt)};
  capture_rules(g, "/t", reports);
  ASSERT_EQ(reports[1].findings.size(), 2u);
  EXPECT_EQ(reports[1].findings[0].rule, RuleId::files_partial);
  EXPECT_EQ(reports[1].findings[0].detail, "0_chakra/rank-1.json.partial is left over");
  EXPECT_EQ(reports[1].findings[1].rule, RuleId::ranks_unpaired);
}

TEST(CaptureRules, NoEtIsFineWhenTheHostTraceWasOff) {
  CaptureMeta meta;
  meta.host_trace = "off";
  auto g = group_with({0});
  g.ranks[0].host_path.reset();
  std::vector<RankReport> reports = {report(0, meta)};
  capture_rules(g, "/t", reports);
  EXPECT_TRUE(reports[0].findings.empty());
}

TEST(CaptureRules, WithoutDeviceTracesTheEtsWorldSizeNamesMissingRanksAsWarnings) {
  // CHAKRA_DEVICE_TRACE=0: ETs only, no metadata; the ETs' process-group
  // node gives the world size, but not CHAKRA_RANKS.
  auto g = group_with({0, 2});
  for (auto& f : g.ranks) f.device_path.reset();
  std::vector<RankReport> reports = {report(0, std::nullopt), report(2, std::nullopt)};
  reports[0].et_world_size = 4;
  capture_rules(g, "/t", reports);
  ASSERT_EQ(reports.size(), 4u);
  for (const std::uint64_t rank : {1u, 3u}) {
    const auto& r = reports[rank];
    EXPECT_EQ(r.rank, rank);
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].rule, RuleId::ranks_missing);
    EXPECT_EQ(severity_of(r.findings[0]), Severity::warning);
    EXPECT_EQ(r.findings[0].detail.rfind("rank " + std::to_string(rank) + " of world size 4 (from the ETs' process groups) has no ET", 0), 0u);
  }
  EXPECT_TRUE(reports[0].findings.empty());
  EXPECT_TRUE(reports[2].findings.empty());
}

TEST(CaptureRules, TheDeviceTracesMetadataWinsOverTheEts) {
  CaptureMeta meta;
  meta.world_size = 2;
  std::vector<RankReport> reports = {report(0, meta)};
  reports[0].et_world_size = 4;  // a different run's ET would not be read here; the metadata decides
  capture_rules(group_with({0}), "/t", reports);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[1].rank, 1u);
  ASSERT_EQ(reports[1].findings.size(), 1u);
  EXPECT_EQ(severity_of(reports[1].findings[0]), Severity::error);
  EXPECT_NE(reports[1].findings[0].detail.find("of world size 2 has no files"), std::string::npos);
}

TEST(CaptureRules, NoWorldSizeAnywhereNamesNoMissingRank) {
  auto g = group_with({1});
  for (auto& f : g.ranks) f.device_path.reset();
  std::vector<RankReport> reports = {report(1, std::nullopt)};
  capture_rules(g, "/t", reports);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_TRUE(reports[0].findings.empty());
}

TEST(RankRanges, CompressesRuns) {
  EXPECT_EQ(rank_ranges({1, 2, 3, 5, 7, 8}), "1-3,5,7-8");
  EXPECT_EQ(rank_ranges({}), "");
}

}  // namespace
}  // namespace chakrashim::tools::check
