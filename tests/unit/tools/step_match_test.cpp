// Unit tests for compare_steps and step_order_problem (tools/check/step_match.h).
#include "check/step_match.h"

#include <gtest/gtest.h>

namespace chakrashim::tools::check {
namespace {

const std::vector<StepEvent> kSteps = {{3, 0, 0, 100}, {4, 0, 100, 200}};

TEST(CompareSteps, MapsEachMarkerToTheStepThatHoldsIt) {
  const auto c = compare_steps({{10, 1}, {11, 2}}, {{1, 0, 90}, {2, 0, 200}}, kSteps);
  EXPECT_EQ(c.et_steps, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_EQ(c.device_steps, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_EQ(c.markers_unjoined, 0u);
  EXPECT_FALSE(c.by_count());
}

TEST(CompareSteps, PrefersTheSteppingThreadsStep) {
  // ts 100 is the end of step 3 and the start of step 4; thread 5 holds 4 only.
  const std::vector<StepEvent> steps = {{3, 0, 0, 100}, {4, 5, 100, 200}};
  EXPECT_EQ(compare_steps({{1, 1}}, {{1, 5, 100}}, steps).et_steps, (std::vector<std::uint64_t>{4}));
}

TEST(CompareSteps, CountsMarkersOutsideEveryStepAndUnjoinedOnes) {
  const auto c = compare_steps({{1, 1}, {2, 2}, {3, 0}}, {{1, 0, 500}}, kSteps);
  EXPECT_TRUE(c.et_steps.empty());
  EXPECT_EQ(c.markers_outside, 1u);
  EXPECT_EQ(c.markers_unjoined, 2u);
  EXPECT_FALSE(c.by_count());
}

TEST(CompareSteps, FallsBackToCountsWhenNothingJoins) {
  const auto c = compare_steps({{1, 1}, {2, 2}}, {}, kSteps);
  EXPECT_TRUE(c.by_count());
  EXPECT_EQ(c.markers, 2u);
}

TEST(StepOrder, SaysWhatIsRepeatedOrOutOfOrder) {
  EXPECT_EQ(step_order_problem({}), "");
  EXPECT_EQ(step_order_problem({3}), "");
  EXPECT_EQ(step_order_problem({3, 4, 6}), "");
  EXPECT_EQ(step_order_problem({3, 4, 5, 6, 3, 4, 5}), "3,4,5,6,3,4,5: 3,4,5 more than once");
  EXPECT_EQ(step_order_problem({3, 0, 4, 1, 5}), "3,0,4,1,5: out of order");
  EXPECT_EQ(step_order_problem({3, 3}), "3,3: 3 more than once");
  std::vector<std::uint64_t> many(30, 7);
  EXPECT_EQ(step_order_problem(many).substr(0, 14), "7,7,7,7,7,7,7,");
  EXPECT_NE(step_order_problem(many).find(",... (30): 7 more than once"), std::string::npos)
      << step_order_problem(many);
}

}  // namespace
}  // namespace chakrashim::tools::check
