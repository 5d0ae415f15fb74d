// The report as terminal tables: per rank the steps, the top ops by self
// time and the GPU figures, then the cross-rank skew per step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "report/report_runner.h"

namespace chakrashim::tools::report {

//   1234567 -> "1.235"   (milliseconds, three decimals)
std::string ms_text(std::int64_t ns);
//   0.4567 -> "45.7%"
std::string percent_text(double share);

std::string render_text(const Report& report, std::size_t top_ops);

}  // namespace chakrashim::tools::report
