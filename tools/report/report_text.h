// The report as terminal tables: per rank the steps, the top ops by self
// time and the GPU figures, then the cross-rank skew per step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/report_runner.h"

namespace chakrashim::tools::report {

//   1234567 -> "1.235"   (milliseconds, three decimals)
std::string ms_text(std::int64_t ns);
//   0.4567 -> "45.7%"
std::string percent_text(double share);

struct TextOptions {
  std::size_t top_ops = 10;
  std::size_t top_ranks = 5;  // slowest ranks listed in the summary
  bool all = false;           // every rank's block, however many ranks
  std::optional<std::vector<std::uint64_t>> ranks;  // only these ranks' blocks
};

// Up to kSummaryAboveRanks ranks (or with --all or --ranks): a block per
// rank, then the skew. More: a summary per run (scale_summary.h).
std::string render_text(const Report& report, const TextOptions& options);

// "chakrashim report: 2 ranks (run 0)"; "chakrashim report: 2 runs: 0 (1 rank), 0.1 (1 rank)"
std::string totals_line(const Report& report);

}  // namespace chakrashim::tools::report
