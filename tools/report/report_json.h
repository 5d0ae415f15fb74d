// The report as one JSON document for machines. Times are integer
// nanoseconds (`*_ns`), exact to the trace's three decimals of µs.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "report/report_runner.h"

namespace chakrashim::tools::report {

nlohmann::ordered_json render_json(const Report& report, std::size_t top_ops);

}  // namespace chakrashim::tools::report
