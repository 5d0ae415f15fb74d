// Unit tests for the cross-rank skew of tools/report/skew.h.
#include "report/skew.h"

#include <gtest/gtest.h>

namespace chakrashim::tools::report {
namespace {

StepTime step(std::uint64_t n, std::int64_t dur, bool partial = false) { return {n, 0, dur, 0, 0, partial}; }

TEST(StepSkew, NamesTheSlowestAndFastestRankAndTheSpreadPerStep) {
  const std::vector<StepTime> r0 = {step(3, 10), step(4, 20)}, r1 = {step(3, 14), step(4, 18)},
                              r2 = {step(3, 12), step(4, 25)};
  const SkewSummary s = step_skew({{0, &r0}, {1, &r1}, {2, &r2}});
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[0].step, 3u);
  EXPECT_EQ(s.steps[0].ranks, 3u);
  EXPECT_EQ(s.steps[0].slowest_rank, 1u);
  EXPECT_EQ(s.steps[0].fastest_rank, 0u);
  EXPECT_EQ(s.steps[0].spread_ns(), 4);
  EXPECT_EQ(s.steps[0].mean_ns, 12);
  EXPECT_EQ(s.steps[1].slowest_rank, 2u);
  EXPECT_EQ(s.steps[1].spread_ns(), 7);
  EXPECT_EQ(s.max_spread_ns, 7);
}

TEST(StepSkew, TiesNameTheLowestRankSlowestAndTheHighestFastest) {
  const std::vector<StepTime> a = {step(1, 10)}, b = {step(1, 10)}, c = {step(1, 10)};
  const SkewSummary s = step_skew({{5, &a}, {2, &b}, {3, &c}});
  EXPECT_EQ(s.steps[0].slowest_rank, 2u);
  EXPECT_EQ(s.steps[0].fastest_rank, 5u);
  EXPECT_EQ(s.steps[0].spread_ns(), 0);
  EXPECT_FALSE(s.most_often_slowest);  // equal times: nobody is slowest
}

TEST(StepSkew, SkipsStepsOfOneRankAndPartialSteps) {
  const std::vector<StepTime> a = {step(1, 10), step(2, 10), step(3, 99, true)}, b = {step(1, 12), step(3, 5)};
  const SkewSummary s = step_skew({{0, &a}, {1, &b}});
  ASSERT_EQ(s.steps.size(), 1u);
  EXPECT_EQ(s.steps[0].step, 1u);
}

TEST(StepSkew, CountsWhichRankIsSlowestMostOften) {
  const std::vector<StepTime> a = {step(1, 10), step(2, 30), step(3, 30)}, b = {step(1, 20), step(2, 10), step(3, 10)};
  const SkewSummary s = step_skew({{0, &a}, {1, &b}});
  EXPECT_EQ(s.most_often_slowest, 0u);
  EXPECT_EQ(s.slowest_count, 2u);
}

TEST(StepSkew, OneRankHasNoSkew) {
  const std::vector<StepTime> a = {step(1, 10)};
  const SkewSummary s = step_skew({{0, &a}});
  EXPECT_TRUE(s.steps.empty());
  EXPECT_FALSE(s.most_often_slowest);
}

}  // namespace
}  // namespace chakrashim::tools::report
