// The partial step at a window's end, left out of what link and convert
// hand on (issue #49): a window cut by the job's exit or a signal keeps the
// step it was in as a partial step (the metadata's steps.partial_last_step),
// which holds the teardown, not a training step; an ET+ or a Chakra graph
// that includes it simulates seconds of work the job never repeats. What
// starts at or after the step's ProfilerStep#N is cut: its CPU ops and
// launches, the GPU ops those launched, and the ET nodes joined to a cut op
// with everything under them. GPU work launched before the cut stays, where
// it ran.
#pragma once

#include <cstdint>
#include <vector>

#include "link/device_ops.h"
#include "link/host_tree.h"

namespace chakrashim::tools::link {

struct PartialCut {
  std::vector<bool> host_dropped;  // per host node, in file order
  std::uint64_t host_nodes = 0, cpu_ops = 0, gpu_ops = 0;
};

// Cuts what starts at or after `cut_ns` out of `device`, and names the host
// nodes to leave out.
//   cpu ops at 10 and 20, cut 15 -> the op at 20 goes, with the ET node of
//   its rf_id and that node's descendants, and the GPU ops it launched
PartialCut cut_partial_step(std::int64_t cut_ns, const std::vector<HostNode>& host, DeviceOps& device);

}  // namespace chakrashim::tools::link
