// Unit tests for the interval arithmetic of tools/report/intervals.h.
#include "report/intervals.h"

#include <gtest/gtest.h>

namespace chakrashim::tools::report {
namespace {

TEST(Merge, JoinsOverlappingAndTouchingSpansAndSortsThem) {
  EXPECT_EQ(merge({{30, 40}, {0, 10}, {5, 20}, {20, 25}}), (IntervalSet{{0, 25}, {30, 40}}));
}

TEST(Merge, DropsEmptySpans) { EXPECT_EQ(merge({{5, 5}, {7, 3}}), IntervalSet{}); }

TEST(Length, SumsTheDisjointParts) { EXPECT_EQ(length({{0, 20}, {30, 40}}), 30); }

TEST(IntersectionLength, CountsOnlyTimeInBothSets) {
  EXPECT_EQ(intersection_length({{0, 20}}, {{10, 30}}), 10);
  EXPECT_EQ(intersection_length({{0, 10}, {20, 30}, {40, 50}}, {{5, 45}}), 5 + 10 + 5);
  EXPECT_EQ(intersection_length({{0, 10}}, {{10, 20}}), 0);
  EXPECT_EQ(intersection_length({}, {{0, 10}}), 0);
}

TEST(Clip, KeepsOnlyTheWindow) {
  EXPECT_EQ(clip({{0, 20}, {30, 40}, {50, 60}}, 10, 35), (IntervalSet{{10, 20}, {30, 35}}));
}

TEST(Subtract, LeavesThePointsOfTheFirstSetNotInTheSecond) {
  EXPECT_EQ(subtract({{0, 100}}, {{10, 20}, {50, 60}}), (IntervalSet{{0, 10}, {20, 50}, {60, 100}}));
  EXPECT_EQ(subtract({{0, 10}, {20, 30}}, {{5, 25}}), (IntervalSet{{0, 5}, {25, 30}}));
  EXPECT_EQ(subtract({{0, 10}}, {{0, 10}}), IntervalSet{});
  EXPECT_EQ(subtract({{0, 10}}, {}), (IntervalSet{{0, 10}}));
}

TEST(Subtract, LengthsAddUpWithTheIntersection) {
  const IntervalSet a = merge({{0, 7}, {9, 30}, {41, 77}}), b = merge({{3, 12}, {25, 50}, {60, 61}});
  EXPECT_EQ(length(subtract(a, b)) + intersection_length(a, b), length(a));
}

}  // namespace
}  // namespace chakrashim::tools::report
