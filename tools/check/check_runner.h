// `chakrashim check` without its command line: finds the rank pairs, checks
// each rank (in parallel), then applies the capture-wide rules. The reports
// come back sorted by group and rank, whatever the scheduling.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "check/findings.h"
#include "check/rank_check.h"

namespace chakrashim::tools::check {

struct RunRequest {
  std::vector<std::string> paths;  // one folder, or trace files
  std::string step_marker = "Optimizer.step#";
  std::size_t threads = 1;
  bool progress = false;  // draw a bar if the input is large and stderr a terminal
};

struct RunResult {
  std::vector<RankReport> reports;
  std::string usage_error;  // set when the paths cannot be checked at all
};

RunResult run_check(const RunRequest& request);

}  // namespace chakrashim::tools::check
