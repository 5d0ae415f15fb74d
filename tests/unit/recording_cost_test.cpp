// Unit tests for the recording cost per op (shim/src/writers/recording_cost.h).
#include "writers/recording_cost.h"

#include <gtest/gtest.h>

namespace chakrashim::writers {
namespace {

OpInterval aten(std::int64_t start, std::int64_t end) { return {start, end, true}; }
OpInterval python(std::int64_t start, std::int64_t end) { return {start, end, false}; }

TEST(RecordingCost, TheGapBetweenTwoAtenOpsAnAtenOpCalls) {
  RecordingCostMeter meter;
  // As the header's example, in the order the store keeps them (by end).
  meter.add_thread({aten(100, 1500), aten(2100, 9800), aten(0, 10000)});
  const auto cost = meter.result();
  ASSERT_TRUE(cost.has_value());
  EXPECT_EQ(cost->per_op_ns, 600);
  EXPECT_EQ(cost->gap_ns, 600);
  EXPECT_FALSE(cost->from_steps);
  EXPECT_EQ(cost->median_ns, 600);
  EXPECT_EQ(cost->pairs, 1u);
}

TEST(RecordingCost, OnlyCallsFromAtenToAtenCount) {
  RecordingCostMeter meter;
  meter.add_thread({
      // Python-level scope calling two aten ops: Python runs between them.
      python(0, 10000), aten(100, 200), aten(5000, 6000),
      // An aten op calling a Python-level record then an aten op.
      aten(20000, 30000), python(20100, 20200), aten(20900, 21000),
  });
  EXPECT_FALSE(meter.result().has_value());
}

TEST(RecordingCost, SiblingsNotGrandchildrenAndTheMeanOfAllThreadsBelowTenMedians) {
  RecordingCostMeter meter;
  // aten::linear -> aten::t (-> aten::transpose) then aten::addmm: the pair
  // is (t, addmm), 500 ns; transpose is t's only child and pairs with
  // nothing. Then a parent with three children: gaps 300 and 400.
  meter.add_thread({aten(0, 10000), aten(100, 1000), aten(200, 900), aten(1500, 9000),
                    aten(20000, 30000), aten(20100, 20200), aten(20500, 20600), aten(21000, 21100)});
  // Another thread: one pair of 10000 ns (real work between the calls),
  // and one of 2000 (an op that costs more to record).
  meter.add_thread({aten(0, 50000), aten(10, 20), aten(10020, 10030), aten(12030, 12040)});
  const auto cost = meter.result();
  ASSERT_TRUE(cost.has_value());
  // Of 300, 400, 500, 2000, 10000: the median is 500, and 10000 lies past
  // ten of it; the mean of the rest, 800.
  EXPECT_EQ(cost->median_ns, 500);
  EXPECT_EQ(cost->pairs, 4u);
  EXPECT_EQ(cost->per_op_ns, 800);
}

TEST(RecordingCost, NothingToMeasureIsNothing) {
  RecordingCostMeter meter;
  EXPECT_FALSE(meter.result().has_value());
  meter.add_thread({});
  meter.add_thread({aten(0, 10)});
  EXPECT_FALSE(meter.result().has_value());
}

TEST(RecordingCost, PairsAreBoundedWhateverTheWindow) {
  RecordingCostMeter meter;
  std::vector<OpInterval> spans{aten(0, 1'000'000'000)};
  for (std::int64_t i = 0; i < 100000; ++i) spans.push_back(aten(10 + i * 100, 10 + i * 100 + 50));
  meter.add_thread(std::move(spans));
  const auto cost = meter.result();
  ASSERT_TRUE(cost.has_value());
  EXPECT_EQ(cost->pairs, RecordingCostMeter::kMaxPairs);
  EXPECT_EQ(cost->per_op_ns, 50);
}

TEST(StepRing, KeepsTheLastEightOldestFirstAndEmptiesWhenTaken) {
  StepRing ring;
  EXPECT_TRUE(ring.take().empty());
  for (std::int64_t i = 1; i <= 3; ++i) ring.add(i);
  EXPECT_EQ(ring.take(), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_TRUE(ring.take().empty());
  for (std::int64_t i = 1; i <= 11; ++i) ring.add(i);
  EXPECT_EQ(ring.take(), (std::vector<std::int64_t>{4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST(StepCost, FastestRecordedLessFastestUnrecordedOverOpsAStep) {
  // Unrecorded 16 (warm-up), 12, 10, 11 ms; recorded 14, 30 (a slow step),
  // 13 ms; 1000 ops a step: (13 - 10) ms / 1000 = 3000 ns.
  EXPECT_EQ(step_cost_per_op({16'000'000, 12'000'000, 10'000'000, 11'000'000}, {14'000'000, 30'000'000, 13'000'000},
                             1000.0),
            3000);
  // Two of each at least.
  EXPECT_EQ(step_cost_per_op({10'000'000, 12'000'000}, {13'000'000, 15'000'000}, 500.0), 6000);
  EXPECT_FALSE(step_cost_per_op({10'000'000}, {13'000'000, 15'000'000}, 1000.0).has_value());
  EXPECT_FALSE(step_cost_per_op({10'000'000, 11'000'000}, {13'000'000}, 1000.0).has_value());
  EXPECT_FALSE(step_cost_per_op({10'000'000, 11'000'000}, {13'000'000, 14'000'000}, 0.0).has_value());
  // Recorded steps no slower (a job whose steps differ): nothing to see.
  EXPECT_FALSE(step_cost_per_op({13'000'000, 15'000'000}, {13'000'000, 14'000'000}, 1000.0).has_value());
}

TEST(StepCost, TheStepsFigureWhereLargerThanTheGapsElseTheGaps) {
  RecordingCost gaps;
  gaps.per_op_ns = gaps.gap_ns = 1000;
  gaps.pairs = 50;
  gaps.median_ns = 600;
  auto larger = recording_cost_of(gaps, 1900, 3);
  ASSERT_TRUE(larger.has_value());
  EXPECT_EQ(larger->per_op_ns, 1900);
  EXPECT_TRUE(larger->from_steps);
  EXPECT_EQ(larger->gap_ns, 1000);
  EXPECT_EQ(larger->unrecorded_steps, 3u);
  auto smaller = recording_cost_of(gaps, 400, 3);
  EXPECT_EQ(smaller->per_op_ns, 1000);
  EXPECT_FALSE(smaller->from_steps);
  EXPECT_EQ(smaller->step_ns, 400);
  auto none = recording_cost_of(gaps, std::nullopt, 1);
  EXPECT_EQ(none->per_op_ns, 1000);
  EXPECT_EQ(none->unrecorded_steps, 1u);
  auto steps_only = recording_cost_of(std::nullopt, 1900, 2);
  EXPECT_EQ(steps_only->per_op_ns, 1900);
  EXPECT_EQ(steps_only->pairs, 0u);
  EXPECT_FALSE(recording_cost_of(std::nullopt, std::nullopt, 5).has_value());
}

}  // namespace
}  // namespace chakrashim::writers
