// Unit tests for the check's output (tools/check/render.h).
#include "check/render.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace chakrashim::tools::check {
namespace {

RankReport sample() {
  RankReport r;
  r.group = "0";
  r.rank = 0;
  r.device_path = "/t/0_kineto/rank-0.json";
  r.findings = {{RuleId::et_finalized, "0_chakra/rank-0.json has no finish_ts and no root node 1"},
                {RuleId::link_host_only, "x has no cuda_runtime event (host-only)"},
                {RuleId::device_no_metadata, "x has no chakrashim object"}};
  r.figures.steps_et = std::vector<std::uint64_t>{3, 4};
  r.figures.steps_device = std::vector<std::uint64_t>{3, 4};
  r.figures.join_matched = 9;
  r.figures.join_total = 10;
  r.figures.events = 20;
  return r;
}

TEST(Render, OneLineNamesTheRankTheRuleAndTheFix) {
  const auto r = sample();
  EXPECT_EQ(finding_line(r, r.findings[0], false),
            "rank 0: error [et.finalized] 0_chakra/rank-0.json has no finish_ts and no root node 1: "
            "the capture did not finish; re-run, or check for a crash before the window ended");
  EXPECT_EQ(finding_line(r, r.findings[0], true).rfind("rank 0 (0): error", 0), 0u);
}

TEST(Render, SummarySaysStepsAndCoverage) {
  EXPECT_EQ(summary_line(sample(), false),
            "rank 0: 1 error, 1 warning; steps 3-4 in both files; rf_id join 9/10 (90.0%); 20 events");
}

TEST(Render, QuietDropsInformationAndSummaries) {
  const std::string text = render_text({sample()}, TextOptions{true, false, false});
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  EXPECT_EQ(text.find("info"), std::string::npos);
}

RankReport clean(std::uint64_t rank, const std::string& group = "0") {
  RankReport r;
  r.group = group;
  r.rank = rank;
  r.host_path = "h";
  r.device_path = "d";
  r.figures.steps_et = std::vector<std::uint64_t>{3, 4};
  r.figures.steps_device = std::vector<std::uint64_t>{3, 4};
  r.figures.join_matched = 10;
  r.figures.join_total = 10;
  return r;
}

TEST(Render, ManyRanksGroupCleanVerdictsAndNameEveryProblemRank) {
  std::vector<RankReport> reports;
  for (std::uint64_t i = 0; i < 512; ++i) reports.push_back(clean(i));
  reports[7].findings = {{RuleId::steps_match, "x: steps differ"}};
  reports[300].findings = {{RuleId::device_dropped, "x: 12 records dropped"}};
  for (auto& r : reports) r.findings.push_back({RuleId::device_no_rank, "x names no rank"});
  const std::string text = render_text(reports, TextOptions{});
  EXPECT_LT(std::count(text.begin(), text.end(), '\n'), 20) << text;
  EXPECT_EQ(text.rfind("chakrashim check: 512 ranks, 1 error, 1 warning (run 0)\n", 0), 0u) << text;
  EXPECT_NE(text.find("510 ranks ok (0-6,8-299,301-511): steps 3-4 in both files; rf_id join 100.0%\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("rank 7: error [steps.match]"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 300: warning [device.dropped]"), std::string::npos) << text;
  EXPECT_NE(text.find("info [device.no_rank] on 512 ranks (0-511), e.g. rank 0"), std::string::npos) << text;
  // --verbose: a line per rank.
  const std::string verbose = render_text(reports, TextOptions{false, false, true});
  EXPECT_GT(std::count(verbose.begin(), verbose.end(), '\n'), 512);
}

TEST(Render, ARuleOnManyRanksIsOneLineNamingThemAll) {
  std::vector<RankReport> reports;
  for (std::uint64_t i = 0; i < 100; ++i) reports.push_back(clean(i));
  for (std::uint64_t i = 10; i < 30; ++i) reports[i].findings = {{RuleId::device_dropped, "x: dropped"}};
  const std::string text = render_text(reports, TextOptions{});
  EXPECT_NE(text.find("warning [device.dropped] on 20 ranks (10-29), e.g. rank 10: x: dropped"), std::string::npos)
      << text;
  EXPECT_LT(std::count(text.begin(), text.end(), '\n'), 6) << text;
}

TEST(Render, TwoRunsOfOneRankAreTwoRunsNotTwoRanks) {
  const std::string line = totals_line({clean(0, "0"), clean(0, "0.1")}, false);
  EXPECT_EQ(line, "chakrashim check: 2 runs: 0 (1 rank), 0.1 (1 rank); 0 errors, 0 warnings\n");
}

TEST(Render, HostOnlyOnACpuProcessIsANoteNotAWarning) {
  RankReport r = clean(0);
  r.findings = {{RuleId::link_host_only, "x has no cuda_runtime event", Severity::info}};
  const Totals t = count_findings({r});
  EXPECT_EQ(t.warnings, 0u);
  EXPECT_EQ(exit_status(t, true), 0);
  EXPECT_NE(finding_line(r, r.findings[0], false).find("info [link.host_only]"), std::string::npos);
}

TEST(Render, ExitStatusFollowsErrorsAndStrictWarnings) {
  EXPECT_EQ(exit_status({1, 0, 0}, true), 0);
  EXPECT_EQ(exit_status({1, 0, 2}, false), 0);
  EXPECT_EQ(exit_status({1, 0, 2}, true), 1);
  EXPECT_EQ(exit_status({1, 1, 0}, false), 1);
}

TEST(Render, JsonCarriesFindingsAndFigures) {
  const auto doc = render_json({sample()}, false);
  EXPECT_EQ(doc["status"], 1);
  EXPECT_EQ(doc["errors"], 1);
  EXPECT_EQ(doc["warnings"], 1);
  EXPECT_EQ(doc["reports"][0]["findings"][0]["rule"], "et.finalized");
  EXPECT_EQ(doc["reports"][0]["figures"]["rf_id_join"]["total"], 10);
  EXPECT_DOUBLE_EQ(doc["reports"][0]["figures"]["rf_id_join"]["share"].get<double>(), 0.9);
}

}  // namespace
}  // namespace chakrashim::tools::check
