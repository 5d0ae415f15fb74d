// The GPU side of one rank's report, from its EventTable: how busy the
// devices were over the captured steps, GPU time by kind, and how much of
// the communication ran under computation. Pure: no I/O.
//
// Everything is measured inside the window [first step start, last step
// end], per device, with GPU ops clipped to it:
//   busy       = |union of all GPU ops|
//   kind_ns[k] = sum of the clipped durations of kind k (streams may overlap)
//   overlap    = |union(communication) ∩ union(compute)|, as a share of
//                |union(communication)| (HTA's comm/comp overlap)
// The breakdown splits window x devices into four parts that add up
// exactly: compute, communication not under compute (exposed), memory under
// neither, and idle.
#pragma once

#include <array>
#include <cstdint>

#include "report/event_table.h"

namespace chakrashim::tools::report {

struct GpuBreakdown {
  std::int64_t compute_ns = 0, exposed_comm_ns = 0, memory_only_ns = 0, idle_ns = 0;
};

struct GpuStats {
  std::uint32_t devices = 0;
  std::uint64_t ops = 0;        // GPU ops that touch the window
  std::int64_t window_ns = 0;   // one device's window
  std::int64_t busy_ns = 0;     // summed over devices
  std::array<std::int64_t, kGpuKinds> kind_ns{};
  std::array<std::uint64_t, kGpuKinds> kind_ops{};
  std::int64_t comm_ns = 0;     // |union(communication)|, summed over devices
  std::int64_t overlap_ns = 0;  // communication under compute
  GpuBreakdown breakdown;

  double busy_share() const;     // busy / (window x devices); 0 without a window
  double overlap_share() const;  // overlap / comm; 0 without communication
};

GpuStats gpu_stats(const EventTable& table, std::int64_t window_start, std::int64_t window_end);

}  // namespace chakrashim::tools::report
