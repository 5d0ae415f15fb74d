// Cross-rank skew: for each step that two or more ranks captured, the
// slowest and fastest rank and the spread between them (max - min of the
// ProfilerStep durations). Partial steps are left out. Pure.
//   rank 0 {3: 10 ms}, rank 1 {3: 14 ms} -> step 3: slowest 1, spread 4 ms
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "report/step_stats.h"

namespace chakrashim::tools::report {

struct StepSkew {
  std::uint64_t step = 0;
  std::uint32_t ranks = 0;
  std::uint64_t slowest_rank = 0, fastest_rank = 0;
  std::int64_t slowest_ns = 0, fastest_ns = 0, mean_ns = 0;
  std::int64_t spread_ns() const { return slowest_ns - fastest_ns; }
};

struct SkewSummary {
  std::vector<StepSkew> steps;  // by step number
  // The rank that was slowest in the most steps with a spread (the lowest
  // on a tie); none when every rank took the same time in every step.
  std::optional<std::uint64_t> most_often_slowest;
  std::uint32_t slowest_count = 0;
  std::int64_t max_spread_ns = 0;
};

using RankStepTimes = std::pair<std::uint64_t, const std::vector<StepTime>*>;
SkewSummary step_skew(const std::vector<RankStepTimes>& ranks);

}  // namespace chakrashim::tools::report
