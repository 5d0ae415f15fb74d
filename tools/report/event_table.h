// What the report keeps of a device trace while it streams by: one compact
// record per host span, GPU op and ProfilerStep (a few words each), with
// names interned once. Memory grows with the number of events, never with
// the file's bytes, and nothing here reads files.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/trace_event.h"

namespace chakrashim::tools::report {

// What a GPU op is spent on (docs/trace-format.md: NCCL kernels are collectives).
enum class GpuKind : std::uint8_t { compute, communication, memory };
inline constexpr int kGpuKinds = 3;

// A cpu_op, user_annotation or CUDA API call on a host thread.
struct HostSpan {
  std::int64_t start = 0, end = 0;
  std::uint32_t name = 0;    // index into EventTable::names
  std::uint32_t thread = 0;  // index into EventTable::threads
  bool annotation = false;   // a user_annotation: a record_function scope
};

// A kernel, memcpy or memset on a device's stream.
struct GpuSpan {
  std::int64_t start = 0, end = 0;
  std::uint32_t name = 0;
  std::uint32_t lane = 0;  // index into EventTable::lanes
  GpuKind kind = GpuKind::compute;
};

struct StepSpan {
  std::uint64_t step = 0;
  std::int64_t start = 0, end = 0;
  std::uint32_t thread = 0;
};

class EventTable {
 public:
  // Keeps `e` if it is a host span, GPU op or ProfilerStep with a time and
  // a duration; metadata, flows and GPU annotations are not timed work.
  void add(const TraceEvent& e);

  std::vector<std::string> names;
  std::vector<std::pair<std::int64_t, std::int64_t>> threads;  // (pid, tid)
  std::vector<std::pair<std::int64_t, std::int64_t>> lanes;    // (device, stream)
  std::vector<HostSpan> host;
  std::vector<GpuSpan> gpu;
  std::vector<StepSpan> steps;  // as read; step_stats sorts and dedups

 private:
  std::uint32_t intern(const std::string& name);
  static std::uint32_t index_of(std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t>& ids,
                                std::vector<std::pair<std::int64_t, std::int64_t>>& list,
                                std::pair<std::int64_t, std::int64_t> key);

  std::unordered_map<std::string, std::uint32_t> name_ids_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t> thread_ids_, lane_ids_;
};

// The totals that were called, by total time, then by name index (so equal
// totals keep one order): the per-name tables of scope_totals and
// module_totals, indexed by name, to their ranked list.
template <class Total>
std::vector<Total> called_by_total(const std::vector<Total>& by_name) {
  std::vector<Total> out;
  for (const auto& t : by_name)
    if (t.calls > 0) out.push_back(t);
  std::sort(out.begin(), out.end(), [](const Total& a, const Total& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return out;
}

}  // namespace chakrashim::tools::report
