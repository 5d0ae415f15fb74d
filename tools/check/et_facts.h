// What the check keeps of a host ET while it streams by: compact per-node
// records (ids, parents, rf_ids), never the nodes themselves.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/et_reader.h"

namespace chakrashim::tools::check {

// An outermost step marker: an Optimizer.step# node with no marker above it.
struct EtMarker {
  std::uint64_t id = 0;
  std::uint64_t rf_id = 0;  // 0 when the node has none
};

// The world size from a "## process_group:init ##" node's input (torch's
// pg_config_info as JSON): the default group's ("0") group_size. nullopt
// when the text is not that list or names no default group.
std::optional<std::uint64_t> world_size_of_process_groups(std::string_view pg_config_json);

class EtFacts {
 public:
  explicit EtFacts(std::string step_marker) : step_marker_(std::move(step_marker)) {}

  void add(const EtNode& node);
  // Call once after the last node: sorts and resolves the markers.
  void finish();

  std::uint64_t nodes() const { return nodes_; }
  bool has_root() const { return has_root_; }
  // Op nodes: every node but the root, thread and process-group nodes.
  std::uint64_t op_nodes() const { return op_rf_ids_.size(); }
  // The op nodes' rf_ids, sorted (0 for a node without one).
  const std::vector<std::uint64_t>& op_rf_ids() const { return op_rf_ids_; }
  const std::vector<EtMarker>& outermost_markers() const { return outermost_; }
  std::uint64_t nodes_missing_attrs() const { return missing_attrs_; }
  // Node ids that appear more than once (after finish()), with one example.
  std::uint64_t duplicate_ids() const { return duplicate_ids_; }
  // Op nodes whose non-zero rf_id another op node has too.
  std::uint64_t duplicate_rf_ids() const { return duplicate_rf_ids_; }
  const std::string& duplicate_example() const { return duplicate_example_; }
  // Nodes whose parent (ctrl_deps) is no node of the file (after finish()),
  // with one example: chakra_converter drops them (issue #49).
  std::uint64_t orphans() const { return orphans_; }
  const std::string& orphan_example() const { return orphan_example_; }
  const std::string& missing_attrs_example() const { return missing_attrs_example_; }
  // The world size the process-group node records; nullopt without one (a
  // job without torch.distributed, or a window that ended before a group).
  std::optional<std::uint64_t> world_size() const { return world_size_; }
  // The numbers of the ProfilerStep#N nodes by node id, i.e. in the order
  // they started (after finish()). chakrashim writes none; torch.profiler
  // writes one per step beside torch's own ET observer.
  const std::vector<std::uint64_t>& profiler_steps() const { return profiler_steps_; }

 private:
  struct Link {
    std::uint64_t id, parent;
    bool marker;
  };
  bool is_outermost(const Link& node) const;

  std::string step_marker_;
  std::uint64_t nodes_ = 0;
  bool has_root_ = false;
  std::vector<std::uint64_t> op_rf_ids_;
  std::vector<Link> links_;  // every node, for the marker's ancestor walk
  std::vector<EtMarker> markers_, outermost_;
  std::uint64_t missing_attrs_ = 0;
  std::string missing_attrs_example_;
  std::uint64_t duplicate_ids_ = 0, duplicate_rf_ids_ = 0;
  std::string duplicate_example_;
  std::uint64_t orphans_ = 0;
  std::string orphan_example_;
  std::optional<std::uint64_t> world_size_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> step_nodes_;  // (id, N)
  std::vector<std::uint64_t> profiler_steps_;
};

}  // namespace chakrashim::tools::check
