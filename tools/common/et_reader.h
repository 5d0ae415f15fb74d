// Streaming reader of a host Execution Trace (torch's observer output):
//   {"schema": ..., "pid": ..., "time": ..., "start_ts": ...,
//    "nodes": [{"id", "name", "ctrl_deps", "inputs", "outputs",
//               "attrs": [{"name", "type", "value"}, ...]}, ...],
//    "finish_ts": ...}
// Each node is handed to the consumer with only what the tools read; inputs
// and outputs are skipped, but for the process-group node's one input.
// Memory does not grow with the file.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/trace_reader.h"

namespace chakrashim::tools {

struct EtNode {
  std::optional<std::uint64_t> id;
  std::string name;
  std::optional<std::uint64_t> parent;  // ctrl_deps
  std::optional<std::uint64_t> rf_id;
  // Bit i set: the node has names::kEtRequiredAttrs[i].
  std::uint8_t attr_mask = 0;
  // The "## process_group:init ##" node's first input value: torch's
  // pg_config_info as JSON text. Unset for every other node.
  std::optional<std::string> process_groups;
};

struct EtSummary {
  ParseOutcome parse;
  std::vector<std::string> top_keys;  // in file order
  std::optional<std::string> schema;
  std::optional<std::uint64_t> pid;  // the process that wrote it
  std::uint64_t nodes = 0;
  // chakrashim's own object after finish_ts (the native recorder's ET,
  // issue #49): whether its window has a device trace, the nodes it closed
  // at an edge. Unset in torch's ETs.
  std::optional<nlohmann::json> chakrashim;
};

using NodeConsumer = std::function<void(const EtNode&)>;

EtSummary read_execution_trace(std::istream& in, const NodeConsumer& consumer);

}  // namespace chakrashim::tools
