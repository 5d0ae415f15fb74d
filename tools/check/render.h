// The check's output, from its reports: one line per finding, naming the
// rank, the rule and the fix; a summary line per rank; or one JSON document.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "check/findings.h"
#include "common/rank_scale.h"

namespace chakrashim::tools::check {

struct Totals {
  std::uint64_t ranks = 0, errors = 0, warnings = 0;
};

Totals count_findings(const std::vector<RankReport>& reports);
// 0 clean or warnings only, 1 on errors (or on warnings under --strict).
int exit_status(const Totals& totals, bool strict);

//   rank 0: error [et.finalized] 0_chakra/rank-0.json has no finish_ts: the capture did not finish; ...
std::string finding_line(const RankReport& report, const Finding& finding, bool show_group);
//   rank 0: ok; steps 4-6 in both files; rf_id join 14388/14388 (100.0%); 40573 events
std::string summary_line(const RankReport& report, bool show_group);
// Above this many ranks the text groups ranks with the same verdict; at or
// below it, and with `verbose`, every rank gets its summary line.
inline constexpr std::size_t kGroupRanksAbove = kRanksShownOneByOne;

struct TextOptions {
  bool quiet = false;    // errors and warnings only
  bool strict = false;   // said in the totals line
  bool verbose = false;  // one summary line per rank, whatever the count
};

// The verdict that ranks share when they read alike: status, steps, join
// share and host-only, without the per-rank counts.
//   "ok; steps 3-4 in both files; rf_id join 100.0%"
std::string verdict_key(const RankReport& report);

// The totals line, naming the runs when there are several:
//   "chakrashim check: 2 ranks, 0 errors, 0 warnings (run 0)"
//   "chakrashim check: 2 runs: 0 (1 rank), 0.1 (1 rank); 0 errors, 0 warnings"
std::string totals_line(const std::vector<RankReport>& reports, bool strict);

// The whole text. Small captures (and --verbose): each finding, then each
// rank's summary line, then the totals. Larger ones: the totals first, one
// line per group of ranks with the same clean verdict, then the lines of
// every rank with an error or warning (a rule that hits many ranks gets one
// line that lists them all), and notes grouped by rule.
std::string render_text(const std::vector<RankReport>& reports, const TextOptions& options);
nlohmann::ordered_json render_json(const std::vector<RankReport>& reports, bool strict);

}  // namespace chakrashim::tools::check
