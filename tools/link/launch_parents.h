// Which CPU op launched each GPU op, by chakra_trace_link's rule
// (trace_linker.py, find_parent_cpu_op and find_closest_op):
//   GPU op --correlation--> its launch (a cuda_runtime/cuda_driver call);
//   then, among CPU ops that start strictly before the launch, on the
//   launch's thread, the latest one whose External id equals the GPU op's;
//   failing that, the latest one on that thread, whatever its External id.
//   NCCL GPU ops ("nccl" in the name, any case) skip ops named
//   "nccl:coalesced".
// The GPU op is then grouped under that CPU op's External id: every host
// node whose op has that External id gets it as a child.
//   launch on tid 7 at 100 us, GPU op External id 42:
//   cpu ops on tid 7: [ext 42 @ 90 us, ext 43 @ 95 us] -> the ext 42 op
//   no ext 42 before 100 us                            -> the ext 43 op
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "link/cpu_threads.h"
#include "link/device_ops.h"

namespace chakrashim::tools::link {

struct LaunchParents {
  // Per GPU op: the External id of its parent CPU op, or nullopt (orphan).
  std::vector<std::optional<std::int64_t>> parent_external_id;
  std::uint64_t no_launch = 0;  // no launch with the GPU op's correlation
  std::uint64_t no_parent = 0;  // a launch, but no CPU op before it on its thread
};

LaunchParents find_launch_parents(const DeviceOps& device, const CpuThreads& threads);

}  // namespace chakrashim::tools::link
