// Unit tests for decide_target (target/target_decision.h): the CHAKRA_RANKS
// filter and the CHAKRA_PROCESS_FILTER regex.
#include "target/target_decision.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "config/config.h"
#include "config/value_grammar.h"
#include "config/identity.h"

namespace chakrashim::target {
namespace {

using config::Config;

Config with_ranks(const std::string& text) {
  Config c;
  c.ranks = config::parse_rank_list(text);
  EXPECT_TRUE(c.ranks) << text;
  c.ranks_text = text;
  return c;
}

Config with_filter(const std::string& pattern) {
  Config c;
  c.process_filter = pattern;
  return c;
}

Identity rank(std::uint64_t r) {
  Identity id;
  id.rank = r;
  id.rank_source = "RANK";
  return id;
}

const ProcessInfo kPython{"python3.11"};

TEST(DecideTarget, MakesEveryProcessATargetWithoutFilters) {
  for (const char* exe : {"python3.11", "bash", "torchrun", ""}) {
    const auto d = decide_target(Config{}, rank(123), ProcessInfo{exe});
    EXPECT_TRUE(d.target) << exe;
    EXPECT_TRUE(d.reason.empty()) << d.reason;
  }
}

TEST(DecideTarget, KeepsARankInsideTheRankFilter) {
  const Config c = with_ranks("0,4-7");
  for (std::uint64_t r : {0, 4, 5, 7}) {
    const auto d = decide_target(c, rank(r), kPython);
    EXPECT_TRUE(d.target) << r;
    EXPECT_TRUE(d.reason.empty()) << d.reason;
  }
}

TEST(DecideTarget, DropsARankOutsideTheRankFilterAndSaysWhy) {
  const auto d = decide_target(with_ranks("0-3"), rank(5), kPython);
  EXPECT_FALSE(d.target);
  EXPECT_EQ(d.reason, "rank 5 is not in CHAKRA_RANKS=0-3");
}

TEST(DecideTarget, DropsEveryRankBetweenTheListedOnes) {
  const Config c = with_ranks("0,4-7");
  for (std::uint64_t r : {1, 2, 3, 8, 100}) {
    const auto d = decide_target(c, rank(r), kPython);
    EXPECT_FALSE(d.target) << r;
    EXPECT_EQ(d.reason, "rank " + std::to_string(r) + " is not in CHAKRA_RANKS=0,4-7");
  }
}

TEST(DecideTarget, KeepsAProcessWhoseBasenameMatchesTheFilter) {
  const Config c = with_filter("^python[0-9.]*$");
  for (const char* exe : {"python", "python3", "python3.11"}) {
    const auto d = decide_target(c, rank(0), ProcessInfo{exe});
    EXPECT_TRUE(d.target) << exe;
    EXPECT_TRUE(d.reason.empty()) << d.reason;
  }
}

TEST(DecideTarget, DropsAProcessWhoseBasenameDoesNotMatchAndSaysWhy) {
  const auto d = decide_target(with_filter("^python[0-9.]*$"), rank(0), ProcessInfo{"bash"});
  EXPECT_FALSE(d.target);
  EXPECT_EQ(d.reason, "executable 'bash' does not match CHAKRA_PROCESS_FILTER=^python[0-9.]*$");
}

TEST(DecideTarget, AnchorsTheFilterOnlyWhereThePatternSaysSo) {
  const Config anchored = with_filter("^python[0-9.]*$");
  EXPECT_FALSE(decide_target(anchored, rank(0), ProcessInfo{"python3.11-config"}).target);
  EXPECT_FALSE(decide_target(anchored, rank(0), ProcessInfo{"ipython"}).target);
  // Unanchored: a match anywhere in the basename counts.
  const Config loose = with_filter("python");
  EXPECT_TRUE(decide_target(loose, rank(0), ProcessInfo{"ipython3"}).target);
}

TEST(DecideTarget, ReadsTheFilterAsAnExtendedRegex) {
  // Alternation, grouping and + are ERE syntax; as a basic regex they would
  // be literal characters and none of these would match.
  const Config c = with_filter("^(python|pt_main_thread)[0-9]+$");
  EXPECT_TRUE(decide_target(c, rank(0), ProcessInfo{"python3"}).target);
  EXPECT_TRUE(decide_target(c, rank(0), ProcessInfo{"pt_main_thread0"}).target);
  EXPECT_FALSE(decide_target(c, rank(0), ProcessInfo{"python"}).target);
  EXPECT_FALSE(decide_target(c, rank(0), ProcessInfo{"torchrun"}).target);
}

TEST(DecideTarget, TreatsAnUncompilableFilterAsNoMatch) {
  const auto d = decide_target(with_filter("("), rank(0), kPython);
  EXPECT_FALSE(d.target);
}

TEST(DecideTarget, ChecksTheRankFilterBeforeTheProcessFilter) {
  Config c = with_ranks("0");
  c.process_filter = "^python";
  const auto d = decide_target(c, rank(1), ProcessInfo{"bash"});
  EXPECT_FALSE(d.target);
  EXPECT_EQ(d.reason, "rank 1 is not in CHAKRA_RANKS=0");
}

TEST(DecideTarget, NeedsBothFiltersToPass) {
  Config c = with_ranks("0-1");
  c.process_filter = "^python";
  EXPECT_TRUE(decide_target(c, rank(1), ProcessInfo{"python3"}).target);
  const auto d = decide_target(c, rank(1), ProcessInfo{"bash"});
  EXPECT_FALSE(d.target);
  EXPECT_EQ(d.reason, "executable 'bash' does not match CHAKRA_PROCESS_FILTER=^python");
}

TEST(DecideTarget, WorksOnAConfigFromTheEnvironment) {
  const config::EnvSnapshot env{{"CHAKRA_PROFILE", "1"},
                                {"CHAKRA_TRACE_DIR", "/tmp/t"},
                                {"CHAKRA_RANKS", "2-3"},
                                {"CHAKRA_PROCESS_FILTER", "^python[0-9.]*$"}};
  const auto r = config::parse_config(env);
  ASSERT_TRUE(r.config);
  EXPECT_TRUE(decide_target(*r.config, rank(2), kPython).target);
  const auto d = decide_target(*r.config, rank(4), kPython);
  EXPECT_FALSE(d.target);
  EXPECT_EQ(d.reason, "rank 4 is not in CHAKRA_RANKS=2-3");
}

}  // namespace
}  // namespace chakrashim::target
