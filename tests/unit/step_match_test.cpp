// Unit tests for compare_steps (tools/check/step_match.h).
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

}  // namespace
}  // namespace chakrashim::tools::check
