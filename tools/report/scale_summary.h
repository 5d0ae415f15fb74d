// A capture of many ranks, summarized so that it reads on one screen: per
// step the distribution of step time over ranks; the ranks that stand out
// (slower than the step's median rank by more than kSlowShare in some step),
// with what makes them slow next to the median rank; the ranks whose
// structure differs from the rest (steps, GPU ops, dropped records, an
// unreadable trace); and the top ops over all ranks. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/rank_scale.h"
#include "report/report_runner.h"

namespace chakrashim::tools::report {

// Above this many ranks a report leads with the summary (text and page).
inline constexpr std::size_t kSummaryAboveRanks = kRanksShownOneByOne;
// A rank stands out when one of its steps took this share more than that
// step's median over ranks.
inline constexpr double kSlowShare = 0.10;

struct StepDistribution {
  std::uint64_t step = 0;
  std::uint32_t ranks = 0;
  std::int64_t min_ns = 0, median_ns = 0, p95_ns = 0, max_ns = 0;
  bool setup = false;  // step 0
  std::int64_t spread_ns() const { return max_ns - min_ns; }
};

// One rank's figures for one step, next to the median rank's.
struct StepFigures {
  std::uint64_t rank = 0;
  std::int64_t step_ns = 0, ops_self_ns = 0, outside_ops_ns = 0;
  PhaseTimes phases{};  // this step's, on the stepping thread
  // Over the whole captured window, on traces with GPU ops.
  std::optional<double> gpu_busy, comm_under_compute;
  std::optional<std::int64_t> compute_ns, comm_ns, memory_ns;
};

struct SlowRank {
  std::uint64_t step = 0;   // its worst step, against that step's median
  double over_median = 0;   // 1.0 = twice the median
  StepFigures figures;
  StepFigures median;       // the median rank of that step
  std::string why;          // the phase (or GPU kind) that grew most: "backward +1.800 ms"
};

struct StructureNote {
  std::uint64_t rank = 0;
  std::string what;  // "steps 3,4 (most ranks: 3,4,5)"
};

struct SummaryOp {
  std::string name;
  std::int64_t self_ns = 0;
  std::uint64_t calls = 0;
  std::uint32_t ranks = 0;
};

struct ScaleSummary {
  std::string group;
  std::uint32_t ranks = 0, readable = 0;
  std::vector<StepDistribution> steps;  // by step number
  std::vector<SlowRank> slow;           // worst first, at most top_ranks
  std::size_t slow_total = 0;           // all ranks that stand out
  std::vector<StructureNote> differ;    // by rank
  std::vector<SummaryOp> ops;           // by self time summed over ranks
};

// p in [0, 1] over sorted values, nearest rank: ({1,2,3,4}, 0.5) -> 2
std::int64_t percentile(const std::vector<std::int64_t>& sorted, double p);

ScaleSummary summarize_group(const GroupReport& group, std::size_t top_ranks, std::size_t top_ops);

}  // namespace chakrashim::tools::report
