// Unit tests for tools/common/rank_totals.h: when link and convert print a
// line per rank, and the totals line that ends their run.
#include "common/rank_totals.h"

#include <gtest/gtest.h>

namespace chakrashim::tools {
namespace {

TEST(RankTotals, ALinePerRankUpToEightOrOnRequest) {
  EXPECT_TRUE(rank_lines_wanted(1, false, false));
  EXPECT_TRUE(rank_lines_wanted(kRankLinesUpTo, false, false));
  EXPECT_FALSE(rank_lines_wanted(kRankLinesUpTo + 1, false, false));
  EXPECT_TRUE(rank_lines_wanted(512, true, false));
  EXPECT_FALSE(rank_lines_wanted(2, true, true));  // --quiet: problems only
}

TEST(RankTotals, TheLineCountsRanksFiguresTimeAndFolders) {
  RankTotals t{"convert", "converted", 512, 1, {"512 linked first", "11264 nodes written"}, ".et", {}};
  EXPECT_EQ(totals_line(t, 3.14159),
            "chakrashim convert: 512 ranks converted, 1 failed; 512 linked first; 11264 nodes written; 3.14 s");
  t.add_output("/t/0_et/rank.0.et");
  t.add_output("/t/0_et/rank.1.et");
  EXPECT_NE(totals_line(t, 1).find("; 1.00 s; .et in /t/0_et"), std::string::npos) << totals_line(t, 1);
  EXPECT_EQ(totals_line(t, 1).find("more folder"), std::string::npos);
  t.add_output("/t/0_et.1/rank.0.et");
  t.add_output("/t/0_et.2/rank.0.et");
  EXPECT_NE(totals_line(t, 1).find(".et in /t/0_et and 2 more folders"), std::string::npos);
  const RankTotals one{"link", "linked", 1, 0, {}, "ET+", {"/t/0_linked/rank-0.json"}};
  EXPECT_EQ(totals_line(one, 0.5), "chakrashim link: 1 rank linked, 0 failed; 0.50 s; ET+ in /t/0_linked");
}

}  // namespace
}  // namespace chakrashim::tools
