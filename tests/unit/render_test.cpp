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
            "rank 0: 1 error, 1 warning; steps 3,4 in both files; rf_id join 9/10 (90.0%); 20 events");
}

TEST(Render, QuietDropsInformationAndSummaries) {
  const std::string text = render_text({sample()}, true, false);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  EXPECT_EQ(text.find("info"), std::string::npos);
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
