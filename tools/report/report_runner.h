// `chakrashim report` without its command line: finds the rank pairs,
// reports each rank (in parallel), then the cross-rank skew per capture
// group. Ranks come back sorted by group and rank, whatever the scheduling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/value_grammar.h"
#include "report/collective_wait.h"
#include "report/rank_report.h"
#include "report/skew.h"

namespace chakrashim::tools::report {

struct ReportRequest {
  std::vector<std::string> paths;  // one folder, or device traces
  std::size_t threads = 1;
  bool progress = false;  // draw a bar if the input is large and stderr a terminal
  bool want_timeline = false;
  std::optional<std::uint64_t> timeline_rank;  // default: the first group's lowest rank
  std::optional<std::uint64_t> timeline_step;  // default: that rank's median step
  std::optional<config::RankSet> only_ranks;    // --ranks: report these only
};

struct GroupReport {
  std::string label;  // "JOB", "JOB.1"; empty for loose files
  std::vector<RankStats> ranks;
  SkewSummary skew;
  CollectiveWaits waits;  // over the readable ranks
};

struct Report {
  std::string root;  // the trace root, as displayed
  std::vector<GroupReport> groups;
  std::vector<std::string> warnings;  // ranks a run should hold and lacks (missing_ranks.h)
  std::string usage_error;  // set when the paths cannot be reported at all
};

Report run_report(const ReportRequest& request);

}  // namespace chakrashim::tools::report
