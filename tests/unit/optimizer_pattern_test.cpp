// Unit tests for OptimizerPattern (window/optimizer_pattern.h), issue #38:
// a GAN-style loop (two optimizers per iteration) is said once, so that the
// user reaches for CHAKRA_STEP_MARKER.
#include "window/optimizer_pattern.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
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

}  // namespace
}  // namespace chakrashim::window
