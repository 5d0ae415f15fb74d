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

}  // namespace
}  // namespace chakrashim::writers
