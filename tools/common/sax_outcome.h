// What a SAX parse error means for a trace: an input that simply stops (a
// writer that never finished) or a real syntax error somewhere inside.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/trace_reader.h"

namespace chakrashim::tools {

//   "...unexpected end of input; expected ']'" -> {ok=false, truncated=true}
//   "...invalid literal; last read: 'tru,'"    -> {ok=false, truncated=false}
inline ParseOutcome outcome_of_error(const nlohmann::detail::exception& ex) {
  const std::string_view what = ex.what();
  ParseOutcome out;
  out.truncated = what.find("unexpected end of input") != std::string_view::npos;
  out.error = std::string(what);
  return out;
}

}  // namespace chakrashim::tools
