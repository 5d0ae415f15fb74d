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
  auto larger = recording_cost_of(gaps, StepFigure{1900, 100}, 3);
  ASSERT_TRUE(larger.has_value());
  EXPECT_EQ(larger->per_op_ns, 1900);
  EXPECT_TRUE(larger->from_steps);
  EXPECT_EQ(larger->gap_ns, 1000);
  EXPECT_EQ(larger->unrecorded_steps, 3u);
  auto smaller = recording_cost_of(gaps, StepFigure{400, 100}, 3);
  EXPECT_EQ(smaller->per_op_ns, 1000);
  EXPECT_FALSE(smaller->from_steps);
  EXPECT_EQ(smaller->step_ns, 400);
  auto none = recording_cost_of(gaps, std::nullopt, 1);
  EXPECT_EQ(none->per_op_ns, 1000);
  EXPECT_EQ(none->unrecorded_steps, 1u);
  auto steps_only = recording_cost_of(std::nullopt, StepFigure{1900, 100}, 2);
  EXPECT_EQ(steps_only->per_op_ns, 1900);
  EXPECT_EQ(steps_only->pairs, 0u);
  EXPECT_FALSE(recording_cost_of(std::nullopt, std::nullopt, 5).has_value());
  EXPECT_TRUE(larger->step_refused.empty());
}

TEST(StepCost, TheNoiseIsHowFarTheTwoFastestOfEachKindDiffer) {
  // Unrecorded 10, 10.2 ms; recorded 13, 13.3 ms; 1000 ops a step:
  // 3000 ns an op, 200 + 300 ns of noise.
  const auto f = step_figure({10'200'000, 10'000'000, 16'000'000}, {13'300'000, 13'000'000}, 1000.0);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->per_op_ns, 3000);
  EXPECT_EQ(f->noise_ns, 500);
}

TEST(StepCost, AFigureWithinItsNoiseOrFarAboveTheGapsIsRefusedAndSaid) {
  // Issue #50: three identical runs of one job gave 2,273 to 8,448 ns from
  // the steps; a DDP rank 19,379; a job whose earlier steps ran under its
  // own profiler 18,331. The gaps' figure stays, and why is in the file.
  RecordingCost gaps;
  gaps.per_op_ns = gaps.gap_ns = 1000;
  gaps.pairs = 50;
  const auto noisy = recording_cost_of(gaps, StepFigure{2273, 1500}, 4);
  EXPECT_EQ(noisy->per_op_ns, 1000);
  EXPECT_FALSE(noisy->from_steps);
  EXPECT_EQ(noisy->step_ns, 2273);
  EXPECT_EQ(noisy->step_refused,
            "the steps' figure (2273 ns an op) is within its own noise: the two fastest steps before the window "
            "and in it differ by 1500 ns an op");
  const auto far = recording_cost_of(gaps, StepFigure{19379, 200}, 8);
  EXPECT_EQ(far->per_op_ns, 1000);
  EXPECT_NE(far->step_refused.find("is more than 3 times the gaps' (1000 ns): the steps before the window did other "
                                   "work or ran under other load"),
            std::string::npos)
      << far->step_refused;
  // Above the gaps, outside its noise, within 3 times: taken.
  const auto taken = recording_cost_of(gaps, StepFigure{2900, 1400}, 8);
  EXPECT_EQ(taken->per_op_ns, 2900);
  EXPECT_TRUE(taken->from_steps);
  EXPECT_TRUE(taken->step_refused.empty());
}

}  // namespace
}  // namespace chakrashim::writers
