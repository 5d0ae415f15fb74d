// Streaming reader of a Kineto-format device trace (docs/trace-format.md). It
// parses with nlohmann's SAX interface: each event of traceEvents is handed
// to the consumer and forgotten, and only distributedInfo and our
// chakrashim object are kept whole. Memory does not grow with the file.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/trace_event.h"

namespace chakrashim::tools {

struct ParseOutcome {
  bool ok = false;
  // The input ended inside the document: a file not finished by its writer.
  bool truncated = false;
  std::string error;  // the parser's message when !ok
};

struct TraceSummary {
  ParseOutcome parse;
  std::vector<std::string> keys_before_events;  // top-level keys, in order
  bool has_trace_events = false;
  std::optional<nlohmann::json> distributed_info;
  std::optional<nlohmann::json> chakrashim;  // our metadata object
  std::uint64_t events = 0;
  std::uint64_t devices = 0;
  std::optional<std::int64_t> base_time_ns;  // baseTimeNanoseconds: event times count from it  // entries of deviceProperties: the GPUs the process saw
};

using EventConsumer = std::function<void(const TraceEvent&)>;

// Reads one whole document from `in`, calling `consumer` once per event.
TraceSummary read_device_trace(std::istream& in, const EventConsumer& consumer);

}  // namespace chakrashim::tools
