// `chakrashim simulate`'s verdicts (tools/simulate/sim_compare.h): ASTRA-sim's
// finished lines, each rank's ratio to its captured window less the
// recording cost, and the lines that name what is off.
#include "simulate/sim_compare.h"

#include <gtest/gtest.h>

namespace chakrashim::tools::simulate {
namespace {

TEST(SimCompare, FinishedLinesAreTheVerdictTheLastOnePerRank) {
  const std::string out =
      "[2026-12-04 15:43:42.450] [workload] [info] sys[0] finished, 63824309 cycles, exposed communication 1 cycles.\n"
      "[2026-12-04 15:43:42.460] [workload] [info] sys[1] finished, 7134159 cycles, exposed communication 1 cycles.\n"
      "sys[1] finished, 7134160 cycles\n"
      "terminate called after throwing an instance of 'std::runtime_error'\n"
      "sys[x] finished, 5 cycles\n";
  const auto f = finished_cycles(out);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f.at(0), 63824309u);
  EXPECT_EQ(f.at(1), 7134160u);
  EXPECT_TRUE(finished_cycles("").empty());
  EXPECT_TRUE(finished_cycles("[Error] (network/analytical) bad file").empty());
}

TEST(SimCompare, TheRatioIsToTheWindowLessTheRecordingCost) {
  // Captured 10 ms, 1 ms of recording cost taken out: 9 ms expected.
  const auto rows = compare({{0, 10'000'000, 4, 1'000'000}, {1, 10'000'000, 4, 0}},
                            {{0, 9'450'000}, {1, 12'000'000}}, 0.15);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(*rows[0].expected_ns, 9'000'000u);
  EXPECT_NEAR(*rows[0].ratio, 1.05, 1e-9);
  EXPECT_FALSE(rows[0].beyond);
  EXPECT_NEAR(*rows[1].ratio, 1.2, 1e-9);
  EXPECT_TRUE(rows[1].beyond);
  const auto problems = problem_lines(rows, 0.15);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0],
            "rank 1 simulated to 1.200 of its expected window (captured 10.00 ms): beyond ±15% (docs/simulate.md, "
            "\"When the simulation does not match\")");
  // A tighter band warns about rank 0 too, and names its cost.
  const auto tight = problem_lines(compare({{0, 10'000'000, 4, 1'000'000}}, {{0, 9'450'000}}, 0.02), 0.02);
  ASSERT_EQ(tight.size(), 1u);
  EXPECT_NE(tight[0].find("captured 10.00 ms less 1.00 ms of recording cost): beyond ±2%"), std::string::npos)
      << tight[0];
}

TEST(SimCompare, UnfinishedAndUnknownRanksAreSaidNeverJudged) {
  const auto rows = compare({{0, 5'000'000, 2, 0}, {1, std::nullopt, std::nullopt, std::nullopt}, {2, 5'000'000, 2, 0}},
                            {{1, 3'000'000}}, 0.15);
  EXPECT_FALSE(rows[0].simulated_ns);
  EXPECT_FALSE(rows[0].ratio);
  EXPECT_FALSE(rows[1].ratio);
  const auto problems = problem_lines(rows, 0.15);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems[0].rfind("rank 0 did not finish in ASTRA-sim", 0), 0u) << problems[0];
  EXPECT_EQ(problems[1].rfind("rank 2 did not finish", 0), 0u) << problems[1];
  EXPECT_EQ(problems[2].rfind("rank 1's .et has no captured window", 0), 0u) << problems[2];
  const auto table = table_lines(rows);
  ASSERT_EQ(table.size(), 4u);
  EXPECT_NE(table[1].find("not finished"), std::string::npos) << table[1];
  EXPECT_NE(table[2].find("3.00 ms"), std::string::npos) << table[2];
}

TEST(SimCompare, ManyRanksOffAreCountedPastTheEighth) {
  std::vector<RankWindow> ranks;
  for (std::uint64_t r = 0; r < 20; ++r) ranks.push_back({r, 1'000'000, 1, 0});
  const auto problems = problem_lines(compare(ranks, {}, 0.15), 0.15);
  ASSERT_EQ(problems.size(), 9u);
  EXPECT_EQ(problems[8], "12 more ranks did not finish");
}

TEST(SimCompare, Durations) {
  EXPECT_EQ(duration_text(812), "812 ns");
  EXPECT_EQ(duration_text(812'400), "812.4 us");
  EXPECT_EQ(duration_text(33'100'000), "33.10 ms");
  EXPECT_EQ(duration_text(1'234'000'000), "1.234 s");
  EXPECT_EQ(duration_text(61'000'000'000), "61.00 s");
}

}  // namespace
}  // namespace chakrashim::tools::simulate
