// A streaming JSON parser that drives nlohmann's SAX interface
// (json::json_sax_t) several times faster than nlohmann's own sax_parse:
// it scans a large buffer with tight loops instead of one virtual read and
// one token-buffer append per character. For the multi-hundred-megabyte
// ET+ files `convert` reads. Strict JSON (RFC 8259) plus what Python's
// json.load also takes and an ET may hold: NaN, Infinity and -Infinity
// (handed over as floats with their token).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <streambuf>
#include <string>

namespace chakrashim::tools {

struct JsonStreamOutcome {
  bool ok = false;
  bool stopped = false;    // a SAX callback returned false
  bool truncated = false;  // the input ended inside the document
  std::string error;       // "syntax error at byte N: ..." when !ok and !stopped
  std::uint64_t position = 0;
};

// Reads one document from `in` to its end (only whitespace may follow).
JsonStreamOutcome parse_json_stream(std::streambuf& in, nlohmann::json::json_sax_t& sax);

}  // namespace chakrashim::tools
