// Checks one rank's pair of files: streams the ET, then the device trace
// (which needs the ET's rf_ids for the join), then applies rank_rules.h.
// This is the one place in check/ that opens trace files.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "check/findings.h"
#include "common/capture_scan.h"

namespace chakrashim::tools::check {

struct CheckOptions {
  std::string step_marker = "Optimizer.step#";
  std::string display_root;  // paths are printed relative to this, when under it
};

// `progress` (may be null) receives the on-disk bytes consumed.
RankReport check_rank(const std::string& group, const RankFiles& files,
                      const CheckOptions& options, std::atomic<std::uint64_t>* progress);

// "/t/0_chakra/rank-0.json" under root "/t" -> "0_chakra/rank-0.json"
std::string display_path(const std::string& path, const std::string& root);

}  // namespace chakrashim::tools::check
