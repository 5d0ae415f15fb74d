#include "report/gpu_stats.h"

#include <algorithm>
#include <map>
#include <vector>

#include "report/intervals.h"

namespace chakrashim::tools::report {

namespace {

struct DeviceSpans {
  std::array<std::vector<Interval>, kGpuKinds> by_kind;
};

IntervalSet united(const IntervalSet& a, const IntervalSet& b) {
  std::vector<Interval> all(a);
  all.insert(all.end(), b.begin(), b.end());
  return merge(std::move(all));
}

}  // namespace

double GpuStats::busy_share() const {
  const double total = static_cast<double>(window_ns) * devices;
  return total > 0 ? static_cast<double>(busy_ns) / total : 0.0;
}

double GpuStats::overlap_share() const {
  return comm_ns > 0 ? static_cast<double>(overlap_ns) / static_cast<double>(comm_ns) : 0.0;
}

GpuStats gpu_stats(const EventTable& table, std::int64_t window_start, std::int64_t window_end) {
  GpuStats out;
  out.window_ns = std::max<std::int64_t>(0, window_end - window_start);
  std::map<std::int64_t, DeviceSpans> devices;
  for (const GpuSpan& g : table.gpu) {
    if (g.start >= window_end || g.end <= window_start) continue;
    const Interval c{std::max(g.start, window_start), std::min(g.end, window_end)};
    const auto k = static_cast<std::size_t>(g.kind);
    ++out.ops;
    ++out.kind_ops[k];
    out.kind_ns[k] += c.end - c.start;
    devices[table.lanes[g.lane].first].by_kind[k].push_back(c);
  }
  out.devices = static_cast<std::uint32_t>(devices.size());
  for (auto& [device, spans] : devices) {
    const IntervalSet compute = merge(spans.by_kind[static_cast<std::size_t>(GpuKind::compute)]);
    const IntervalSet comm = merge(spans.by_kind[static_cast<std::size_t>(GpuKind::communication)]);
    const IntervalSet memory = merge(spans.by_kind[static_cast<std::size_t>(GpuKind::memory)]);
    const IntervalSet compute_or_comm = united(compute, comm);
    const std::int64_t busy = length(united(compute_or_comm, memory));
    out.busy_ns += busy;
    out.comm_ns += length(comm);
    out.overlap_ns += intersection_length(comm, compute);
    out.breakdown.compute_ns += length(compute);
    out.breakdown.exposed_comm_ns += length(subtract(comm, compute));
    out.breakdown.memory_only_ns += length(subtract(memory, compute_or_comm));
    out.breakdown.idle_ns += out.window_ns - busy;
  }
  return out;
}

}  // namespace chakrashim::tools::report
