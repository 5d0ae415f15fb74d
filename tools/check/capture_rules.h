// The rules about a whole capture rather than one file: leftover .partial
// files, ranks with only one of their two files, and ranks that the
// metadata's world size says should be there (or CHAKRA_RANKS excluded).
#pragma once

#include <vector>

#include "check/findings.h"
#include "common/capture_scan.h"

namespace chakrashim::tools::check {

// Adds findings to the reports of `group` (one per rank, sorted), appending
// reports for ranks that have no files, and one capture-wide report (rank
// nullopt) when a finding concerns no single rank.
void capture_rules(const CaptureGroup& group, const std::string& display_root,
                   std::vector<RankReport>& reports);

}  // namespace chakrashim::tools::check
