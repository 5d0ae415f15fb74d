// The check's output, from its reports: one line per finding, naming the
// rank, the rule and the fix; a summary line per rank; or one JSON document.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "check/findings.h"

namespace chakrashim::tools::check {

struct Totals {
  std::uint64_t ranks = 0, errors = 0, warnings = 0;
};

Totals count_findings(const std::vector<RankReport>& reports);
// 0 clean or warnings only, 1 on errors (or on warnings under --strict).
int exit_status(const Totals& totals, bool strict);

//   rank 0: error [et.finalized] 0_chakra/rank-0.json has no finish_ts: the capture did not finish; ...
std::string finding_line(const RankReport& report, const Finding& finding, bool show_group);
//   rank 0: ok; steps 4,5,6 in both files; rf_id join 14388/14388 (100.0%); 40573 events
std::string summary_line(const RankReport& report, bool show_group);
// Every line, in report order; `quiet` keeps errors and warnings only.
std::string render_text(const std::vector<RankReport>& reports, bool quiet, bool strict);
nlohmann::ordered_json render_json(const std::vector<RankReport>& reports, bool strict);

}  // namespace chakrashim::tools::check
