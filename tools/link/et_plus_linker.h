// The pure join of a host ET and a device trace into Chakra's "ET+", with
// chakra_trace_link's semantics (mlcommons/chakra src/trace_link, 1.0.0):
//   - host node -> CPU op by rf_id = "Record function id" (nodes reachable
//     from node 1 only); the node gets ts, inclusive_dur, exclusive_dur and
//     inter_thread_dep;
//   - GPU op -> launch by correlation -> CPU op (launch_parents.h) -> every
//     timed host node whose op has that External id gets a child node;
//   - ids renumbered from 0 in id order, each node's GPU children (by ts)
//     numbered right after it; ctrl_deps follow, and a ctrl_deps naming no
//     node gets a fresh id past the end, as Chakra's id assigner gives it.
// A host-only device trace (no GPU ops) links too: the host nodes are timed
// and there are no children. HTA's sync_dep is not computed.
// No I/O here: the readers feed it, et_plus_writer.h writes its result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "link/device_ops.h"
#include "link/host_tree.h"

namespace chakrashim::tools::link {

struct NodeTiming {
  std::int64_t ts = 0, inclusive = 0, exclusive = 0;  // ns
  std::optional<std::uint64_t> inter_thread_dep;      // a new id
};

struct LinkedNode {
  std::uint64_t new_id = 0;
  std::optional<std::uint64_t> new_parent;  // set when the node has an integer ctrl_deps
  std::optional<std::uint32_t> timing;      // index into LinkPlan::timings
  // GPU children: plan.child_ops[first_child, first_child + children), with
  // new ids new_id + 1 + i.
  std::uint32_t first_child = 0, children = 0;
  // Left out (partial_step.h): no id, not written, in no write_order.
  bool dropped = false;
};

struct LinkStats {
  std::uint64_t host_nodes = 0, reachable = 0, timed = 0;
  std::uint64_t cpu_ops = 0, gpu_ops = 0, memsets = 0;
  std::uint64_t gpu_children = 0;     // child nodes written
  std::uint64_t gpu_unlinked = 0;     // GPU ops under no host node
  std::uint64_t gpu_no_launch = 0, gpu_no_parent = 0;
  std::uint64_t dropped = 0;  // host nodes left out
};

struct LinkPlan {
  std::vector<LinkedNode> nodes;  // per host node, in file order
  std::vector<NodeTiming> timings;
  std::vector<std::uint32_t> child_ops;  // indices into DeviceOps::gpu
  std::vector<std::uint32_t> write_order;  // file positions in output order
  bool in_file_order = true;
  LinkStats stats;
  std::string error;  // set when Chakra would refuse the pair; nothing else is then
};

// `dropped` (per host node, in file order; may be null): nodes left out,
// with all their descendants among them (partial_step.h).
LinkPlan link_et_plus(const std::vector<HostNode>& host, const DeviceOps& device,
                      const std::vector<bool>* dropped = nullptr);

}  // namespace chakrashim::tools::link
