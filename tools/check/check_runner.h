// `chakrashim check` without its command line: finds the rank pairs, checks
// each rank (in parallel), then applies the capture-wide rules. The reports
// come back sorted by group and rank, whatever the scheduling.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "check/findings.h"
#include "check/rank_check.h"
#include "common/capture_scan.h"

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

// Paths print relative to the trace root: the folder given, or its parent
// when it is itself a JOB_chakra/JOB_kineto folder (report uses it too).
//   "/t/0_kineto" -> "/t"   "/t" -> "/t"
std::string display_root_of(const std::string& dir);

// The rank pairs under `paths` (one folder, or trace files), with the root
// paths print relative to; nullopt, with `usage_error` set, when the paths
// cannot be read as a capture. Shared by check and report.
std::optional<ScanResult> scan_paths(const std::vector<std::string>& paths, std::string& display_root,
                                     std::string& usage_error);

}  // namespace chakrashim::tools::check
