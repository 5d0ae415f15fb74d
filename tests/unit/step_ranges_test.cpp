// Unit tests for writers/step_ranges.h.
#include "writers/step_ranges.h"

#include <gtest/gtest.h>

namespace chakrashim::writers {
namespace {

TEST(StepRanges, RunsOfConsecutiveStepsBecomeRanges) {
  EXPECT_EQ(step_ranges({3, 4, 6, 7, 9}), "3-4,6-7,9");
  std::vector<std::uint64_t> many;
  for (std::uint64_t s = 100; s <= 300; ++s) many.push_back(s);
  EXPECT_EQ(step_ranges(many), "100-300");
}

TEST(StepRanges, SingleStepsEmptyInputOrderAndDuplicates) {
  EXPECT_EQ(step_ranges({}), "");
  EXPECT_EQ(step_ranges({5}), "5");
  EXPECT_EQ(step_ranges({9, 2, 3, 3, 1}), "1-3,9");
  EXPECT_EQ(step_ranges({0, 2, 4}), "0,2,4");
}

}  // namespace
}  // namespace chakrashim::writers
