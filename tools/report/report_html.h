// The report as one self-contained HTML page: the tables of the terminal
// report and three SVG charts (step time per rank per step, a time
// breakdown per rank, one step of one rank as a timeline). Styles are
// inline and nothing is fetched, so the file can be mailed or archived.
#pragma once

#include <cstddef>
#include <string>
#include <cstdint>

#include "report/report_runner.h"

namespace chakrashim::tools::report {

struct HtmlOptions {
  std::size_t top_ops = 10;
  std::size_t top_ranks = 5;
  std::string folder;  // what the page says it shows
};

// Up to kSummaryAboveRanks ranks: a table per rank and a bar per rank.
// More: the rank x step heatmap, the per-step distribution and the slowest
// ranks first; per-rank tables collapsed in <details>; the charts per rank
// limited to the slowest ranks and the median rank.
std::string render_html(const Report& report, const HtmlOptions& options);

}  // namespace chakrashim::tools::report
