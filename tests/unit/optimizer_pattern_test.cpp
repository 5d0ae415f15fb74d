// Unit tests for OptimizerPattern (window/optimizer_pattern.h), issue #38:
// a GAN-style loop (two optimizers per iteration) is said once, so that the
// user reaches for CHAKRA_STEP_MARKER.
#include "window/optimizer_pattern.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace chakrashim::window {
namespace {

std::optional<OptimizerPattern::Detection> feed(const std::vector<std::uint64_t>& ids) {
  OptimizerPattern p;
  std::optional<OptimizerPattern::Detection> first;
  for (std::size_t step = 0; step < ids.size(); ++step) {
    const auto d = p.on_step(ids[step], step);
    if (d && !first) first = d;
    else EXPECT_FALSE(d) << "told twice, at step " << step;
  }
  return first;
}

TEST(OptimizerPattern, OneOptimizerIsNeverReported) { EXPECT_FALSE(feed({7, 7, 7, 7, 7})); }

TEST(OptimizerPattern, AnOptimizerReplacedByAnotherIsASecondPhaseNotAPattern) {
  EXPECT_FALSE(feed({7, 7, 9, 9, 9}));
}

TEST(OptimizerPattern, TwoOptimizersInTurnAreToldOnceWhenTheFirstStepsAgain) {
  const auto d = feed({7, 9, 7, 9, 7, 9});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->step, 2u);
  EXPECT_EQ(d->optimizers, 2u);
}

TEST(OptimizerPattern, ThreeOptimizersAreCountedWhenTheFirstComesBack) {
  const auto d = feed({1, 2, 3, 1, 2, 3});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->step, 3u);
  EXPECT_EQ(d->optimizers, 3u);
}

// Issue #54: an optimizer stepped once per parameter group by a wrapper
// (ZeRO's, when its engine is not seen). Fed (optimizer, first group).
std::optional<std::uint64_t> feed_groups(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& steps) {
  OptimizerPattern p;
  std::optional<std::uint64_t> first;
  for (std::size_t step = 0; step < steps.size(); ++step) {
    const auto d = p.on_groups(steps[step].first, steps[step].second, step);
    if (d && !first) first = d;
    else EXPECT_FALSE(d) << "told twice, at step " << step;
  }
  return first;
}

TEST(OptimizerPattern, StepsGroupByGroupAreToldWhenTheFirstGroupComesBack) {
  // Two groups, one inner step each: g1, g2, g1, g2.
  const auto d = feed_groups({{7, 100}, {7, 200}, {7, 100}, {7, 200}});
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, 2u);
}

TEST(OptimizerPattern, ThreeGroupsAreToldAtTheFourthStep) {
  const auto d = feed_groups({{7, 1}, {7, 2}, {7, 3}, {7, 1}, {7, 2}});
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, 3u);
}

// Issue #52: the groups are read over the job's first steps only (each
// read costs the job's step outside the window); a pattern that begins
// later is not watched for, and the hooks stop reading.
TEST(OptimizerPattern, GroupsAreWatchedOverTheFirstStepsOnly) {
  OptimizerPattern p;
  constexpr std::uint64_t last = OptimizerPattern::kGroupSteps - 1;
  EXPECT_TRUE(p.groups_watched(0));
  EXPECT_TRUE(p.groups_watched(last));
  EXPECT_FALSE(p.groups_watched(last + 1));
  for (std::uint64_t step = 0; step < 2 * OptimizerPattern::kGroupSteps; ++step) {
    const std::uint64_t group = step <= last ? 100 : (step % 2 ? 200 : 100);  // cycles from step 256 on
    EXPECT_FALSE(p.on_groups(7, group, step)) << "told at step " << step;
  }
  // The same cycle within the first steps is told.
  OptimizerPattern q;
  EXPECT_FALSE(q.on_groups(7, 100, last - 2));
  EXPECT_FALSE(q.on_groups(7, 200, last - 1));
  EXPECT_EQ(q.on_groups(7, 100, last), last);
  EXPECT_FALSE(q.groups_watched(0)) << "told: nothing more to read";
}

TEST(OptimizerPattern, TheSameGroupsEveryStepAreNeverTold) {
  EXPECT_FALSE(feed_groups({{7, 100}, {7, 100}, {7, 100}, {7, 100}}));
}

TEST(OptimizerPattern, GroupsReplacedForGoodAreNotTold) {
  // A job that rebuilt its optimizer's groups once (a second phase).
  EXPECT_FALSE(feed_groups({{7, 100}, {7, 100}, {7, 200}, {7, 200}, {7, 200}}));
}

TEST(OptimizerPattern, TwoOptimizersInTurnEachWithItsGroupsAreNotToldAsGroups) {
  EXPECT_FALSE(feed_groups({{7, 100}, {9, 200}, {7, 100}, {9, 200}, {7, 100}}));
}

TEST(OptimizerPattern, UnknownGroupsAreIgnored) {
  EXPECT_FALSE(feed_groups({{7, 0}, {7, 100}, {7, 0}, {7, 100}, {7, 0}}));
}

}  // namespace
}  // namespace chakrashim::window
