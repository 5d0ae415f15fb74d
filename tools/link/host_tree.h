// The host ET's nodes as chakra_trace_link loads them (PARAM's et_replay):
// a node's parent is its ctrl_deps; node 1 is the root and never anyone's
// child; only the nodes reachable from it are linked. Kept compact: three
// numbers per node, so an ET of millions of nodes fits in tens of MB.
//   nodes {1 (parent 1), 2 (parent 1), 5 (parent 9)} -> reachable {1, 2}
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace chakrashim::tools::link {

struct HostNode {
  std::uint64_t id = 0;
  std::optional<std::uint64_t> parent;  // ctrl_deps
  std::optional<std::uint64_t> rf_id;   // attrs rf_id
};

struct HostTree {
  std::vector<std::uint32_t> by_id;  // file positions in id order
  std::vector<bool> reachable;       // per file position
  bool file_in_id_order = true;      // the writer can then stream without reordering
  bool has_root = false;
  std::optional<std::uint64_t> duplicate_id;  // two nodes with one id: refused
};

HostTree build_host_tree(const std::vector<HostNode>& nodes);

// The file position of the node with `id`, or nullopt.
std::optional<std::uint32_t> find_node(const std::vector<HostNode>& nodes, const HostTree& tree, std::uint64_t id);

}  // namespace chakrashim::tools::link
