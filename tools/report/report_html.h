// The report as one self-contained HTML page: the tables of the terminal
// report and three SVG charts (step time per rank per step, a time
// breakdown per rank, one step of one rank as a timeline). Styles are
// inline and nothing is fetched, so the file can be mailed or archived.
#pragma once

#include <cstddef>
#include <string>

#include "report/report_runner.h"

namespace chakrashim::tools::report {

std::string render_html(const Report& report, std::size_t top_ops);

}  // namespace chakrashim::tools::report
