// Unit tests for the step a rank's report shows by default
// (tools/report/rank_report.h).
#include "report/rank_report.h"

#include <gtest/gtest.h>

namespace chakrashim::tools::report {
namespace {

TEST(MedianStep, PicksTheCompleteStepOfMedianDuration) {
  EXPECT_EQ(median_step({{3, 0, 10}, {4, 0, 30}, {5, 0, 20}}), 5u);
  EXPECT_EQ(median_step({{3, 0, 10}, {4, 0, 30}}), 3u);
  EXPECT_EQ(median_step({{3, 0, 10}, {4, 0, 1, 0, 0, true}}), 3u);
  EXPECT_FALSE(median_step({}));
}

}  // namespace
}  // namespace chakrashim::tools::report
