// What a SAX parse error means for a trace: an input that simply stops (a
// writer that never finished) or a real syntax error somewhere inside.
#pragma once

#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/json_stream_parser.h"
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

// Reads one document from `in` into `sax` (parse_json_stream): what the
// readers report of it; "the reader stopped" when a callback refused.
inline ParseOutcome parse_with(std::istream& in, nlohmann::json::json_sax_t& sax) {
  const JsonStreamOutcome parsed = parse_json_stream(*in.rdbuf(), sax);
  if (parsed.ok) return ParseOutcome{true, false, {}};
  return ParseOutcome{false, parsed.truncated, parsed.stopped ? "the reader stopped" : parsed.error};
}

// A reader's whole run: `Sax(summary, consumer)` fills the summary as it
// reads, and the summary's `parse` says how the document ended.
template <class Sax, class Summary, class Consumer>
Summary read_with(std::istream& in, const Consumer& consumer) {
  Summary summary;
  Sax sax(summary, consumer);
  summary.parse = parse_with(in, sax);
  return summary;
}

}  // namespace chakrashim::tools
