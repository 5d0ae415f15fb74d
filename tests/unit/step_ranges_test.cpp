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

// Issue #38: a window whose steps a GradScaler all skipped said
// "captured steps [] (0 steps", with no word of why.
TEST(CapturedText, NamesTheStepsKept) {
  StepsMeta m;
  m.start = 2;
  m.end = 3;
  m.captured = {2, 3};
  EXPECT_EQ(captured_text(m), "captured steps [2-3] (2 steps");
  m.captured = {5};
  EXPECT_EQ(captured_text(m), "captured steps [5] (1 step");
}

// Issue #49: the line named the whole steps only, while both files also
// held the partial step the exit cut.
TEST(CapturedText, APartialStepBesideWholeOnesIsNamed) {
  StepsMeta m;
  m.start = 25;
  m.end = 40;
  m.captured = {25, 26, 27, 28, 29};
  m.partial_last_step = 30;
  m.reason = "exit";
  EXPECT_EQ(captured_text(m), "captured steps [25-29] + partial step 30, cut by exit (5 steps");
}

TEST(CapturedText, AWindowWithOnlyAPartialStepSaysWhyAndWhichStep) {
  StepsMeta m;
  m.start = 3;
  m.end = 4;
  m.partial_last_step = 3;
  m.reason = "signal:SIGTERM";
  EXPECT_EQ(captured_text(m),
            "captured no whole step of the window [3-4]: it ended (signal:SIGTERM) during step 3, so only that "
            "partial step is kept (0 steps");
  m.reason = "exit";
  EXPECT_EQ(captured_text(m),
            "captured no whole step of the window [3-4]: the job ended during step 3, before any optimizer step "
            "completed it (an iteration whose optimizer.step() does not run is no step, as when a GradScaler "
            "skips it on inf or nan gradients), so only that partial step is kept (0 steps");
}

}  // namespace
}  // namespace chakrashim::writers
